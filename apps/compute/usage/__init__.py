"""Usage: GPU samples and the node agent, GPU-hours and the budget, idle and silent nodes, quotas,
scheduled shutdowns and the stops courseops makes on its own. The top floor of compute: it may
use the board and the cloud, and neither of them imports it."""

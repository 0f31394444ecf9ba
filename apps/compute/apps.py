from django.apps import AppConfig


class ComputeConfig(AppConfig):
    name = "apps.compute"
    label = "compute"
    verbose_name = "Compute: nodes and static IPs"

    def ready(self) -> None:
        from apps.compute import panels
        from apps.core.registry import STAFF, Panel, register_panel

        register_panel(
            Panel(
                key="compute-inventory",
                title="Compute",
                template="compute/panels/inventory.html",
                context=panels.inventory_context,
                roles=STAFF,
                order=25,
            )
        )

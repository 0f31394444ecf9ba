from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("extensions", "0004_link_requests_to_exceptions")]
    operations = [
        migrations.AddConstraint(
            model_name='extensionrequest',
            constraint=models.UniqueConstraint(condition=models.Q(('assignment__isnull', False), ('group__isnull', False), ('status', 'open')), fields=('group', 'assignment'), name='one_open_group_request_per_assignment'),
        ),
    ]

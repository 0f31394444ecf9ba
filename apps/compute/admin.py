from django.contrib import admin

from apps.compute.models import Node, StaticIP


@admin.register(Node)
class NodeAdmin(admin.ModelAdmin):
    list_display = ("name", "zone", "machine_type", "gpu_count", "gpu_model", "status", "course")
    list_filter = ("course", "status", "zone")
    search_fields = ("name", "internal_ip")


@admin.register(StaticIP)
class StaticIPAdmin(admin.ModelAdmin):
    list_display = ("address", "resource_name", "region", "status", "course")
    list_filter = ("course", "status", "region")
    search_fields = ("address", "resource_name")

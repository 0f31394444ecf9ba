from django.contrib import admin

from apps.perfcalc.models import CustomGPU


@admin.register(CustomGPU)
class CustomGPUAdmin(admin.ModelAdmin):
    list_display = ("name", "key", "course", "bandwidth_gbs", "memory_gb", "source")
    list_filter = ("course",)
    search_fields = ("name", "key")

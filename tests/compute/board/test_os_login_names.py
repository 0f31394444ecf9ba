"""Under OS Login the guest ignores `ssh-keys`, and a person's account on the node is the OS Login
POSIX username of their Google identity: the node page, its SSH config, a window's SSH config and
the dashboard say that name, not the course's login name (issue #69)."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from apps.compute.board.logins import os_login_name, unix_names
from apps.compute.board.services import allocation_create
from apps.compute.cloud import sync as cloud
from apps.compute.models import Allocation, Node
from apps.core.models import Role
from apps.groups.models import GroupMembership
from tests.compute.cloud.test_cloud import _with_keys
from tests.factories import group_of, member


@pytest.mark.parametrize(
    ("email", "name"),
    [
        ("jane.doe@university.edu", "jane_doe_university_edu"),
        ("Jane.Doe@University.EDU", "jane_doe_university_edu"),
        ("o'brien-k@cs.example.org", "o_brien_k_cs_example_org"),
        ("a.very.long.name.indeed@students.university.edu", "a_very_long_name_indeed_students"),
    ],
)
def test_the_os_login_username_joins_user_and_domain(email: str, name: str) -> None:
    assert os_login_name(email) == name
    assert len(os_login_name(email)) <= 32


def lend_a_node(course, email: str) -> tuple[Allocation, Any]:  # type: ignore[no-untyped-def]
    """A group with SSH keys lent a node, the cloud converged; one member has `email`."""
    staff = member(course, Role.INSTRUCTOR)
    group = group_of(course, 4, "Alpha")
    _with_keys(group)
    student = GroupMembership.objects.filter(group=group).select_related("user").first().user
    student.email = email
    student.save(update_fields=["email"])
    alloc = allocation_create(actor=staff, course=course, group_id=group.pk)
    cloud.drain(course.pk)
    return alloc, student


@pytest.mark.django_db(transaction=True)
def test_under_os_login_the_student_is_shown_their_google_identitys_username(
    ee290, gce_peer, client
) -> None:  # type: ignore[no-untyped-def]
    gce_peer.seed_from_board(ee290)
    gce_peer.set_project(project_metadata=[{"key": "enable-oslogin", "value": "TRUE"}])
    alloc, student = lend_a_node(ee290, "Jane.Doe@university.edu")
    node = Node.objects.get(pk=alloc.node_id)
    assert node.os_login is True  # what the cloud said, recorded for the board
    ip = Allocation.objects.get(pk=alloc.pk).static_ip.address
    course_name = unix_names(ee290.pk, [student.pk])[student.pk]
    assert course_name.startswith("jane_doe")
    assert course_name != "jane_doe_university_edu"

    client.force_login(student)
    page = client.get(reverse("compute:mine", kwargs={"code": ee290.code})).content.decode()
    assert f"ssh jane_doe_university_edu@{ip}" in page
    assert f"ssh {course_name}@" not in page
    assert "OS Login is on for this node" in page
    ssh = client.get(
        reverse("compute:my-file", kwargs={"code": ee290.code, "kind": "ssh"})
    ).content.decode()
    assert "    User jane_doe_university_edu\n" in ssh
    dash = client.get(reverse("core:dashboard", kwargs={"code": ee290.code})).content.decode()
    assert f"ssh jane_doe_university_edu@{ip}" in dash

    # OS Login turned off in the project: the next reconcile records it, and the course's
    # login name (the one courseops writes into `ssh-keys`) is shown again.
    gce_peer.set_project(project_metadata=[{"key": "enable-oslogin", "value": "FALSE"}])
    cloud.reconcile(ee290)
    assert Node.objects.get(pk=node.pk).os_login is False
    page = client.get(reverse("compute:mine", kwargs={"code": ee290.code})).content.decode()
    assert f"ssh {course_name}@{ip}" in page
    assert "OS Login is on" not in page

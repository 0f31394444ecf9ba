"""DATABASE_URL with every host of a PostgreSQL that fails over (libpq's multi-host form) reaches
psycopg as libpq's host and port lists, with its options; one host parses as before; a host list
on anything but PostgreSQL, or a port that is not a number, is refused naming the part."""

from __future__ import annotations

import pytest

from courseops.settings.database import parse_database_url


def test_a_host_list_becomes_libpqs_host_and_port_lists_with_its_options() -> None:
    config = parse_database_url(
        "postgres://courseops:pw@db1:5432,db2:5433/courseops"
        "?target_session_attrs=read-write&connect_timeout=5",
        conn_max_age=60,
        conn_health_checks=True,
    )
    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert (config["HOST"], config["PORT"]) == ("db1,db2", "5432,5433")
    assert (config["USER"], config["PASSWORD"], config["NAME"]) == ("courseops", "pw", "courseops")
    assert config["OPTIONS"] == {"target_session_attrs": "read-write", "connect_timeout": 5}
    assert config["CONN_HEALTH_CHECKS"] is True


def test_hosts_without_ports_and_ipv6_hosts() -> None:
    assert parse_database_url("postgres://u@db1,db2/x")["PORT"] == ""
    config = parse_database_url("postgres://u@[::1]:5432,[fd00::2]:5432/x")
    assert (config["HOST"], config["PORT"]) == ("::1,fd00::2", "5432,5432")


def test_one_host_parses_as_dj_database_url_does() -> None:
    config = parse_database_url("postgres://u@db1:5432/x")
    assert (config["HOST"], config["PORT"]) == ("db1", 5432)


@pytest.mark.parametrize(
    ("url", "named"),
    [
        ("mysql://u@db1,db2/x", "'mysql'"),
        ("postgres://u@db1:54x2,db2/x", "'db1:54x2'"),
        ("postgres://u@db1,,db2/x", "''"),
    ],
)
def test_a_bad_host_list_is_refused_naming_the_part(url: str, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        parse_database_url(url)

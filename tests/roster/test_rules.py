"""Reading class lists: formats, encodings, and every bad row named with its column."""

from __future__ import annotations

import pytest

from apps.roster.rules import parse_roster


def problems(data: bytes) -> list[str]:
    return [str(p) for p in parse_roster(data).problems]


def test_plain_file() -> None:
    p = parse_roster(
        b"name,email,sid,role\nAda Okafor,Ada@Uni.edu,3031,student\nTim TA,tim@uni.edu,,TA\n"
    )
    assert [(r.name, r.email, r.sid, r.role) for r in p.rows] == [
        ("Ada Okafor", "ada@uni.edu", "3031", "student"),
        ("Tim TA", "tim@uni.edu", "", "ta"),
    ]
    assert p.problems == []


def test_bcourses_export_with_bom_and_sortable_names() -> None:
    data = (
        "\ufeffName,Student ID,Email Address,Role,Sections,Majors\n"
        '"Okafor, Ada",3031,ada@berkeley.edu,Student,LEC 001,EECS\n'
        '"Tanaka, Hiro",3032,hiro@berkeley.edu,GSI,LEC 001,\n'
    ).encode()
    p = parse_roster(data)
    assert [(r.name, r.role) for r in p.rows] == [("Ada Okafor", "student"), ("Hiro Tanaka", "ta")]
    assert p.columns == {
        "name": "Name",
        "email": "Email Address",
        "sid": "Student ID",
        "role": "Role",
    }


def test_canvas_style_headers_semicolons_and_windows_1252() -> None:
    data = (
        "Student;SIS User ID;Email;Role\nJosé Núñez;3033;jose@uni.edu;StudentEnrollment\n".encode(
            "cp1252"
        )
    )
    p = parse_roster(data)
    assert p.rows[0].name == "José Núñez"
    assert p.rows[0].role == "student"
    assert any("Windows-1252" in n for n in p.notes)


def test_tabs_and_no_role_column_default_to_students() -> None:
    p = parse_roster(b"email\tname\na@uni.edu\tA\n")
    assert p.rows[0].role == "student"
    assert "No role column" in p.notes[0]


def test_every_bad_row_is_named_with_row_and_column() -> None:
    data = (
        b"name,email,sid,role\nAda,ada@uni.edu,3031,student\n,bo@uni.edu,3032,student\n"  # row 3: missing name
        b"Cy,,3033,student\n"  # row 4: missing email
        b"Di,ada@uni.edu,3034,student\n"  # row 5: duplicate email
        b"Ed,ed@uni.edu,3031,student\n"  # row 6: duplicate SID
        b"Fy,fy@uni.edu,3036,wizard\n"  # row 7: unknown role
        b"Gu,not-an-email,3037,student\n"
    )  # row 8
    assert problems(data) == [
        "row 3, column 'name': missing name",
        "row 4, column 'email': missing email",
        "row 5, column 'email': duplicate email ada@uni.edu (also row 2)",
        "row 6, column 'sid': duplicate SID 3031 (also row 2)",
        "row 7, column 'role': unknown role 'wizard' (use student, TA or instructor)",
        "row 8, column 'email': 'not-an-email' is not an email address",
    ]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "file: the file is empty"),
        (b"   \n\n", "file: the file is empty"),
        (b"first,last,mail\nA,B,c@d.e\n", "row 1: no name column"),
        (b"name,email\n", "file: the file has a header but no people"),
    ],
)
def test_wrong_columns_and_empty_files(data: bytes, message: str) -> None:
    assert any(p.startswith(message) for p in problems(data))


def test_ten_thousand_rows_parse_with_each_duplicate_reported() -> None:
    lines = ["name,email,sid,role"] + [
        f"Student {i},s{i}@uni.edu,{100000 + i},student" for i in range(10_000)
    ]
    lines[5001] = "Student dup,s7@uni.edu,999999,student"
    p = parse_roster("\n".join(lines).encode())
    assert len(p.rows) == 9_999
    assert [str(x) for x in p.problems] == [
        "row 5002, column 'email': duplicate email s7@uni.edu (also row 9)"
    ]

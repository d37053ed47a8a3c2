"""docs/cli.md is what the commands' ``--help`` says now (``python -m rubric.cli.docs``)."""

from __future__ import annotations

from rubric.cli import docs


def test_the_committed_reference_is_current(capsys):
    assert docs.main(["--check"]) == 0, capsys.readouterr().err


def test_a_stale_page_is_found_and_rewritten(tmp_path, monkeypatch, capsys):
    page = tmp_path / "cli.md"
    monkeypatch.setattr(docs, "PAGE", page)
    page.write_text(docs.render().replace("[default: tsv]", "[default: csv]", 1), encoding="utf-8")
    assert docs.main(["--check"]) == 1
    assert "out of date: run `python -m rubric.cli.docs`" in capsys.readouterr().err
    assert docs.main([]) == 0 and docs.main(["--check"]) == 0


def test_every_command_has_its_section():
    from rubric.cli.main import COMMANDS

    text = docs.render()
    for group, names in COMMANDS.items():
        assert f"\n## rubric {group}\n" in text
        for name in names:
            assert f"\n## rubric {group} {name}\n\n```text\nUsage: rubric {group} {name} " in text

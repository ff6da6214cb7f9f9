"""The README's Python session runs as written (doctest)."""

import doctest
import pathlib

import pytest

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def session():
    text = README.read_text(encoding="utf-8")
    section = text[text.index("\n## Python\n"):]
    start = section.index("```python\n") + len("```python\n")
    return section[start:section.index("```\n", start)]


@pytest.mark.skipif(not README.exists(), reason="the README is not beside this checkout")
def test_readme_session():
    parser = doctest.DocTestParser()
    test = parser.get_doctest(session(), {}, "README Python session", str(README), 0)
    assert len(test.examples) >= 10
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    runner.run(test)
    assert runner.failures == 0, "the README's Python session differs (see the output above)"

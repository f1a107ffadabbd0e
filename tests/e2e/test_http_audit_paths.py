"""Over HTTP, doiget_audit_manuscript reads a draft only inside DOIGET_IMPORT_DIRS (a
caller's roots are never asked for), and the files a draft names only inside its own
folder there; a refusal names no path of the server's and reaches no upstream."""

from __future__ import annotations

from pathlib import Path

from httputil import TOKEN, http_server, http_session, token_file
from mcputil import call

from replay import ReplayUpstream


async def test_over_http_a_draft_is_read_only_inside_the_import_folders(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    imports, private = tmp_path / "imports", tmp_path / "server-private"
    (imports / "paper").mkdir(parents=True)
    private.mkdir()
    (private / "secret.tex").write_text("A secret \\cite{hidden}.\n")
    (private / "refs.bib").write_text("@article{doe, title={Private}}\n")
    (imports / "paper" / "linked.tex").symlink_to(private / "secret.tex")
    (imports / "paper" / "draft.tex").write_text("Glaciers retreat \\cite{doe}.\n")
    includes = {
        "input-out.tex": "Ice \\cite{doe}.\n\\input{../../server-private/secret}\n",
        "input-link.tex": "Ice \\cite{doe}.\n\\input{linked}\n",
        "input-absolute.tex": f"Ice \\cite{{doe}}.\n\\input{{{private / 'secret'}}}\n",
    }
    for name, text in includes.items():
        (imports / "paper" / name).write_text(text)
    (imports / "paper" / "bib-out.tex").write_text(
        "Ice \\cite{doe}.\n\\bibliography{../../server-private/refs}\n"
    )
    env = {
        **doiget_env,
        "DOIGET_IMPORT_DIRS": str(imports),
        "DOIGET_HTTP_TOKENS_FILE": str(token_file(tmp_path, TOKEN)),
    }
    with http_server(env, tmp_path) as server:
        async with http_session(server.url) as session:

            async def audit(path: Path) -> dict[str, object]:
                return await call(session, "doiget_audit_manuscript", {"path": str(path)})

            named = [private / "secret.tex", imports / "paper" / "linked.tex",
                     imports / ".." / "server-private" / "secret.tex"]  # fmt: skip
            outside = [await audit(path) for path in named]
            included = [await audit(imports / "paper" / name) for name in includes]
            bib = await audit(imports / "paper" / "bib-out.tex")
            read = await audit(imports / "paper" / "draft.tex")
    for path, refused in zip(named, outside, strict=True):
        assert refused["ok"] is False and refused["error"]["code"] == "CAPABILITY_DENIED"  # type: ignore[index]
        # the path the caller gave, and no other: not the import folder, nor a link's target
        assert str(tmp_path) not in str(refused).replace(str(path), "the path given")
    for refused in included:
        assert refused["ok"] is False and refused["error"]["code"] == "INVALID_REF"  # type: ignore[index]
    for answer in [*outside, *included, bib]:
        assert "hidden" not in str(answer)
    for answer in [*included, bib]:  # the absolute path a draft wrote is its own
        assert str(tmp_path) not in str(answer).replace(str(private / "secret.tex"), "written")
    assert bib["ok"] is True and bib["summary"]["missing"] == 1  # type: ignore[index]
    assert read["ok"] is True and read["summary"]["citations"] == 1  # type: ignore[index]
    assert upstream.requests == []

"""``schemarag generate --db DB "question"``: SQL from a question, or the exact prompt.

One index version is pinned for the whole command: the chunks retrieved, the DDL rendered
(pre-rendered pieces from the artifact, no per-request SQL parsing) and the schema the SQL is
validated against all come from it. Without a published index, a call *without* ``--tenant``
falls back to ``<data>/<db>.json`` (RAG cannot run and the output says why), but only to a
schema file that belongs to no tenant. A ``--tenant`` call is served only from that tenant's
own index: anything else fails with the same "no published index" as a database that does
not exist, so one tenant can never read another's schema. ``--prompt-only`` needs no model:
it prints the messages that would be sent and the retrieval metadata. ``--examples N`` puts the
N past queries of the database's query history that best fit the question's tables into the
prompt (default :data:`~schemarag.runtime.search.history_examples.DEFAULT_EXAMPLES`, measured;
an index without a history gets none). The model is configured by ``SCHEMARAG_LLM_BASE_URL``,
``SCHEMARAG_LLM_MODEL`` and ``SCHEMARAG_LLM_API_KEY``.
"""

from __future__ import annotations

import argparse
import json
import logging
from typing import Any

from schemarag.app.commands.hints import missing_index_message
from schemarag.app.commands.retrieve_cmd import add_focus_arguments, table_focus
from schemarag.app.commands.schema_source import resolve_schema
from schemarag.runtime.core.errors import ArtifactNotFoundError, ConfigError, SchemaFileError
from schemarag.runtime.core.paths import artifacts_dir, data_dir, schema_path
from schemarag.runtime.core.schema import Database
from schemarag.runtime.formatting import TableDDL
from schemarag.runtime.ranking.config import TableFocus
from schemarag.runtime.search.history_examples import DEFAULT_EXAMPLES, MAX_EXAMPLES

log = logging.getLogger(__name__)

_EXIT = {True: 0, False: 1, None: 3}  # validation valid, invalid, unchecked (not validated)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", required=True, help="database name (schema and artifact)")
    parser.add_argument("question", help="the natural-language question")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--use-retrieval",
        dest="use_retrieval",
        action="store_true",
        default=None,
        help="force RAG (focused schema) regardless of table count",
    )
    mode.add_argument(
        "--no-retrieval", dest="use_retrieval", action="store_false", help="force the full schema"
    )
    parser.add_argument("--top-k", type=int, default=None, help="chunks to retrieve (default: retriever's)")
    add_focus_arguments(parser)
    parser.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="minimum relevance in [0, 1] for a chunk (default: retriever's)",
    )
    parser.add_argument("--token-budget", type=int, default=None, help="cap the focused schema's size")
    parser.add_argument(
        "--examples",
        type=int,
        default=None,
        metavar="N",
        help="past queries from the database's query history to show as examples, those that best "
        f"fit the question's tables (default {DEFAULT_EXAMPLES}; 0: none; needs `import queries`)",
    )
    parser.add_argument("--tenant", default=None, help="tenant whose live-datasource index to use")
    parser.add_argument(
        "--prompt-only",
        action="store_true",
        help="print the messages that would be sent and the retrieval metadata; no LLM",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")


def _open(
    args: argparse.Namespace, ranking: TableFocus
) -> tuple[Database, Any, dict[str, TableDDL] | None, Any]:
    """The schema, a retrieve callable (which raises if no index exists), the pre-rendered
    DDL and the version itself (its query history), all of one pinned index version (see
    ``schema_source``)."""
    try:
        source = resolve_schema(args.db, args.tenant, args.artifacts, args.data)
    except (ArtifactNotFoundError, SchemaFileError) as exc:
        data = data_dir(args.data)
        if isinstance(exc, SchemaFileError) and schema_path(data, args.db).is_file():
            raise  # the file exists but is broken: its own message names the fix
        msg = missing_index_message(args.db, artifacts_dir(args.artifacts), args.tenant, data)
        raise ArtifactNotFoundError(msg) from None  # the CLI-only hint (see commands.hints)
    pinned = source.pinned
    if pinned is None:
        open_error = source.open_error

        def unavailable(question: str, top_k: int | None, threshold: float | None) -> Any:
            raise open_error  # type: ignore[misc]

        return source.database, unavailable, None, None

    def retrieve(question: str, top_k: int | None, threshold: float | None) -> Any:
        return pinned.search(question, top_k=top_k, relevance_threshold=threshold, **ranking.search_kwargs())

    return source.database, retrieve, source.ddl, pinned.artifact


def run(args: argparse.Namespace) -> int:
    from schemarag.app.querygen.generator import generate, prepare_prompt
    from schemarag.app.querygen.llm_client import ChatClient
    from schemarag.app.querygen.strategy import StrategyConfig

    if args.top_k is not None and args.top_k < 1:
        raise ConfigError(f"--top-k {args.top_k}: use a whole number >= 1")
    ranking = table_focus(args)
    if ranking.requested and args.use_retrieval is False:
        raise ConfigError("--table-budget, --focus and --adaptive need a focused schema; drop --no-retrieval")
    # asking for a focus is asking for retrieval, even on a database small enough for all of it
    use_retrieval = True if ranking.requested else args.use_retrieval
    if args.threshold is not None and not 0.0 <= args.threshold <= 1.0:
        raise ConfigError(f"--threshold {args.threshold}: use a value between 0 and 1")
    if args.examples is not None and not 0 <= args.examples <= MAX_EXAMPLES:
        raise ConfigError(f"--examples {args.examples}: use a whole number from 0 to {MAX_EXAMPLES}")
    config = StrategyConfig.from_env()
    client = None if args.prompt_only else ChatClient.from_env()  # fail before any retrieval work
    db, retrieve, ddl, artifact = _open(args, ranking)
    options = {
        "retrieve": retrieve, "use_retrieval": use_retrieval, "top_k": args.top_k,
        "relevance_threshold": args.threshold, "config": config, "token_budget": args.token_budget,
        "ddl": ddl, "artifact": artifact, "examples": args.examples,
    }  # fmt: skip
    if args.prompt_only:
        prepared = prepare_prompt(args.question, db, **options)
        if args.json:
            print(json.dumps(prepared.to_dict(), indent=2, ensure_ascii=False))
        else:
            for message in prepared.messages:
                print(f"===== {message['role']} =====\n{message['content']}\n")
            print("===== retrieval_metadata =====")
            print(json.dumps(prepared.metadata, indent=2, ensure_ascii=False))
            print("===== usage =====")
            print(json.dumps(prepared.usage, indent=2))
        return 0
    output = generate(args.question, db, client, **options)
    if args.json:
        print(json.dumps(output, indent=2, ensure_ascii=False))
    else:
        _print_human(output)
    return _EXIT[output["validation"]["valid"]]  # the exit codes of `schemarag validate`


def _print_human(output: dict[str, Any]) -> None:
    meta = output["retrieval_metadata"]
    print(output["query"])
    print()
    print(f"-- {output['explanation']}")
    print(
        f"-- confidence: {output['confidence']}"
        + (f" ({'; '.join(output['confidence_factors'])})" if output["confidence_factors"] else "")
    )
    print(f"-- tables used: {', '.join(output['tables_used'])}")
    for assumption in output["assumptions"]:
        print(f"-- assumption: {assumption}")
    strategy = f"-- strategy: {meta['strategy']} ({len(meta['tables_included'])} tables"
    if meta["strategy"] == "rag":
        strategy += f", {meta['chunks_retrieved']} chunks, avg relevance {meta['avg_relevance_score']:.2f}"
    print(strategy + ")" + (f"; fallback: {meta['fallback_reason']}" if meta.get("fallback_reason") else ""))
    usage = output["usage"]
    examples = (
        f", {len(meta['examples'])} past queries ~{usage['examples_tokens']}"
        if usage.get("examples_tokens")
        else ""
    )
    print(f"-- prompt ~{usage['prompt_tokens']} tokens (schema ~{usage['schema_tokens']}{examples})")
    validation = output["validation"]
    if validation["valid"]:
        print("-- validation: ok" + (" (after one repair)" if validation["repaired"] else ""))
    elif validation["valid"] is None:
        print(f"-- validation: UNCHECKED, not validated ({validation['unchecked_reason']})")
    else:
        print("-- validation: FAILED")
        for error in validation["errors"]:
            print(f"--   {error}")

"""The join graph: declared edges cheaper than inferred ones, cheapest bridges, and completion
under the budget (bridges displace the lowest-ranked tables, never the better-ranked ones)."""

from __future__ import annotations

from schemarag.runtime.core.schema import Database
from schemarag.runtime.ranking.budget import complete_join_paths
from schemarag.runtime.search.join_graph import DECLARED_COST, cheapest_path, edge_cost, edges_of


def _fk(table: str, inferred: bool = False, confidence: float | None = None) -> dict:
    fk: dict = {"table": table, "column": "id"}
    if inferred:
        fk |= {"inferred": True, "confidence": confidence}
    return fk


def _db() -> Database:
    """employees -< assignments >- projects (a bridge over inferred keys), projects -> clients
    declared, and a noisy attribute table joined to employees by a weak guess."""
    tables = [
        {"name": "employees", "columns": [{"name": "id"}, {"name": "name"}]},
        {"name": "projects", "columns": [{"name": "id"},
                                         {"name": "client_id", "foreign_key": _fk("clients")}]},
        {"name": "clients", "columns": [{"name": "id"}]},
        {"name": "assignments", "columns": [
            {"name": "employee_id", "foreign_key": _fk("employees", True, 0.8)},
            {"name": "project_id", "foreign_key": _fk("projects", True, 0.8)}]},
        {"name": "badges", "columns": [{"name": "id"},
                                       {"name": "employee_id", "foreign_key": _fk("employees", True, 0.3)},
                                       {"name": "project_id", "foreign_key": _fk("projects", True, 0.3)}]},
    ]  # fmt: skip
    return Database.model_validate({"name": "hr", "tables": tables})


def test_inferred_edges_never_cost_less_than_declared_ones() -> None:
    assert edge_cost(True, 1.0) > DECLARED_COST == edge_cost(False, None)
    assert edge_cost(True, 0.3) > edge_cost(True, 0.8)
    g = edges_of(_db())
    assert g["projects"]["clients"] == DECLARED_COST and g["clients"]["projects"] == DECLARED_COST


def test_the_cheapest_bridge_is_the_surer_one() -> None:
    g = edges_of(_db())
    assert cheapest_path(g, "employees", {"projects"}, max_hops=3) == ["assignments"]  # not badges
    assert cheapest_path(g, "employees", {"clients"}, max_hops=3) == ["assignments", "projects"]
    assert cheapest_path(g, "employees", {"clients"}, max_hops=2) == []  # too far
    assert cheapest_path(g, "projects", {"clients"}, max_hops=3) == []  # they touch


def test_completion_spends_budget_on_connectivity_before_the_weakest_match() -> None:
    g = edges_of(_db())
    ranked = ["employees", "projects", "badges_noise", "other"]
    g |= {"badges_noise": {}, "other": {}}
    out = complete_join_paths(g, ranked, budget=4, hops=3)
    assert out == ["employees", "projects", "assignments", "badges_noise"]  # "other" made room
    assert complete_join_paths(g, ranked, budget=4, hops=0) == ranked  # no hop allowed: no bridge


def _hr_schema(union: bool) -> dict:
    """employees and projects joined only through the assignments bridge (inferred keys), beside
    two unrelated tables; ``union``: the second of them comes from another source database."""
    fk = {"inferred": True, "confidence": 0.8}
    tables = [
        {"name": "employees", "columns": [{"name": "id"}, {"name": "name"}]},
        {"name": "projects", "columns": [{"name": "id"}, {"name": "title"}]},
        {"name": "noise_a", "columns": [{"name": "x"}]},
        {"name": "noise_b", "columns": [{"name": "y"}]},
        {"name": "assignments", "columns": [
            {"name": "employee_id", "foreign_key": {"table": "employees", "column": "id", **fk}},
            {"name": "project_id", "foreign_key": {"table": "projects", "column": "id", **fk}}]},
    ]  # fmt: skip
    if union:
        for t in tables:
            t["database"] = "misc" if t["name"] == "noise_b" else "hr"
    return {"name": "hr", "tables": tables}


def test_the_ranking_completes_join_paths_in_one_database_not_in_a_union() -> None:
    import numpy as np
    from ranking_support import rank_with
    from tiny_support import in_memory_artifact

    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.1], dtype=np.float32)  # the bridge ranks last
    kw = {"fk_expand": False, "coverage_power": 0.0, "route_hedge": None}
    single = _hr_schema(union=False)
    art = in_memory_artifact(single, [(t["name"], "table", None) for t in single["tables"]])
    # by default the bridge takes the place of the weakest lexical match
    assert rank_with(art, scores, 3, **kw).tables == ["employees", "projects", "assignments"]
    assert rank_with(art, scores, 3, join_paths=False, **kw).tables == [
        "employees",
        "projects",
        "noise_a",
    ]
    union = _hr_schema(union=True)
    art = in_memory_artifact(union, [(t["name"], "table", None) for t in union["tables"]])
    assert "assignments" not in rank_with(art, scores, 3, **kw).tables  # routing decides
    assert "assignments" in rank_with(art, scores, 3, join_paths=True, **kw).tables

"""Step parsing, executors (accumulated-code rule, whitelist) and answer equivalence on real benchmark answers."""

import json

import pytest

from icml25.rstar_math.domain.answer_check import AnswerChecker
from icml25.rstar_math.domain.benchmarks_data import load_benchmark
from icml25.rstar_math.domain.step_format import StepFormat, extract_boxed, parse_step
from icml25.rstar_math.execution.code_executors import ExecResult, SafeArithExecutor, accumulated_code


def test_parse_step_kinds():
    s = parse_step(" # Ann has 7 \n Ann = 7 <end_of_step>")
    assert s.kind == "code" and s.code == "# Ann has 7\nAnn = 7" and not s.closes_code
    s = parse_step(" # print \n print ( Ann ) <end_of_code>")
    assert s.kind == "code" and s.closes_code
    a = parse_step("<answer>The answer is \\boxed{\\frac{1}{2}}<end_of_answer>")
    assert a.kind == "answer" and a.answer == "\\frac{1}{2}"
    assert parse_step("Bob = 3").kind == "invalid"  # no stop tag: unfinished generation
    assert parse_step("").kind == "invalid"
    assert parse_step("\\boxed{").kind == "invalid"
    with pytest.raises(TypeError):
        parse_step(None)


def test_extract_boxed_nesting_and_text():
    assert extract_boxed("so \\boxed{\\text{(B)}} done") == "(B)"
    assert extract_boxed("x \\boxed{1} y \\boxed{{a}+{b}}") == "{a}+{b}"
    assert extract_boxed("nothing") is None


def test_prompt_round_trip():
    f = StepFormat()
    p = f.prompt("What is 1 + 1 ?")
    assert p.startswith("<|user|>:\n") and p.endswith("solve the problem with code.")
    assert f.question_of(p + " <code> x") == "What is 1 + 1 ?"
    with pytest.raises(ValueError):
        f.prompt("  ")


def test_safe_executor_whitelist():
    ex = SafeArithExecutor(allow_float=False)
    assert ex.run("a = 7\nb = a * 3 - 1\nprint(b // 2)").stdout == "10"
    for code, err in [("import os", "DisallowedError"), ("while True:\n    pass", "DisallowedError"),
                      ("print(c)", "NameError"), ("a = 1 // 0", "ZeroDivisionError"), ("a = (", "SyntaxError"),
                      ("a = 2 ** 1000", "OverflowError"), ("open('x')", "DisallowedError"),
                      ("a = 1.5", "DisallowedError")]:
        r = ex.run(code)
        assert r.error is not None and r.error.startswith(err), (code, r)
        assert r.is_error
    assert SafeArithExecutor().run("print(3 / 2)").stdout == "1.5"
    assert ExecResult(stdout="", timed_out=True).is_error


def test_accumulated_code_rule():
    # (code, closes_block, timed_out): walk up to the previous closed block, skip timed-out ancestors
    path = [("x = 1", False, False), ("print(x)", True, False), ("y = 2", False, False),
            ("while 1: pass", False, True), ("z = y + 1", False, False)]
    assert accumulated_code(path) == "y = 2\nz = y + 1"
    assert accumulated_code([("a = 1", False, False)]) == "a = 1"
    with pytest.raises(ValueError):
        accumulated_code([])


def test_answer_checker_on_real_answers():
    ch = AnswerChecker()
    math500 = load_benchmark("math500")[:15]
    gsm = load_benchmark("gsm8k")[:15]
    for rec in math500 + gsm:
        assert ch.equivalent(rec["answer"], rec["answer"])
    # equivalent rewritings and wrong answers on real items
    assert ch.equivalent("18.0", gsm[0]["answer"]) and ch.equivalent("$18", gsm[0]["answer"])
    assert not ch.equivalent("19", gsm[0]["answer"])
    assert ch.equivalent("\\left( 3, \\frac{\\pi}{2} \\right)", math500[0]["answer"])
    assert ch.equivalent("(3,\\pi/2)", math500[0]["answer"])
    assert not ch.equivalent("(3,\\pi)", math500[0]["answer"])
    assert ch.equivalent("1/2", "\\frac{1}{2}") and ch.equivalent("0.5", "\\frac12")
    assert not ch.equivalent(None, "1")
    with pytest.raises(ValueError):
        ch.equivalent("1", "")


def test_shipped_example_formats():
    from icml25.core.data import resolve_data

    rm = json.loads(resolve_data("rstar_math", "rm_data_examples.json").read_text())
    sft = json.loads(resolve_data("rstar_math", "sft_data_examples.json").read_text())
    assert set(rm[0]) >= {"prompt", "pos", "neg", "pos_count", "neg_count"}
    assert set(sft[0]) >= {"query", "response"}
    f = StepFormat.official()
    resp = sft[0]["response"]
    assert extract_boxed(resp) == "4"
    assert "print(4)" in f.code_of(resp)

"""The file fuzz contract (:mod:`icml25.testing.file_fuzz`) over every public loader of user files.

One parametrized test per loader x malformed variant (plus the valid file), on small files written here. NaN policy,
decided per loader: NaN-tolerant (``nan_ok``) only where the format has missing values -- ImCLEF ARFF rows (``?``
is a missing feature). Everywhere else a NaN in a number field raises.

Loaders not covered, with the reason: ``cat.load_cat_adapter`` (needs a diffusers VAE instance),
``hier_decoding.load_imclef`` and ``egplace.load_ibm01`` (thin wrappers over ``read_hierarchical_arff`` and
``read_bookshelf``, covered here), checkpoints the library writes and reads back itself (``GCIVL.load``, rStar-Math
``load_policy``/``load_ppm``/``load_weights``/``WordTokenizer.load``), the shipped-only image arrays of
``sdp_crown.load_images`` (no path argument), and ``core.report.read_report`` (the report JSON written by a run).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from icml25.testing.file_fuzz import FileLoaderCase, check_variant, run_variant, variants


def _text(name: str, text: str) -> Callable[[Path], Path]:
    def write(folder: Path) -> Path:
        p = folder / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        return p if "/" not in name else folder
    return write


def _files(files: dict[str, str], ret: str | None = None) -> Callable[[Path], Path]:
    def write(folder: Path) -> Path:
        for name, text in files.items():
            p = folder / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text, encoding="utf-8")
        return folder / ret if ret is not None else folder
    return write


def _is(kind: type, n_min: int = 1) -> Callable[[Any], None]:
    def validate(obj: Any) -> None:
        assert isinstance(obj, kind) and len(obj) >= n_min, f"expected a {kind.__name__} of >= {n_min} items"
    return validate


# ------------------------------------------------------------------------------------------------------- egplace
BOOK = {
    "t.aux": "RowBasedPlacement : t.nodes t.nets t.wts t.pl t.scl\n",
    "t.nodes": "UCLA nodes 1.0\n# hand-written\n\nNumNodes : 5\nNumTerminals : 2\n a0 20 32\n a1 10 48\n c0 4 16\n"
               " p0 40 40 terminal\n p1 30 50 terminal\n",
    "t.nets": "UCLA nets 1.0\n\nNumNets : 2\nNumPins : 5\nNetDegree : 2 n0\n a0 I : 1.5 -2\n a1 O : 0 0\n"
              "NetDegree : 3 n1\n p0 I : 2 2\n c0 O : 0 0\n p1 B : -1 4\n",
    "t.pl": "UCLA pl 1.0\n\na0 0 0 : N\na1 20 0 : N\nc0 30 0 : N\np0 100 0 : N /FIXED\np1 0 100 : N /FIXED\n",
    "t.scl": "UCLA scl 1.0\n\nNumRows : 2\n\nCoreRow Horizontal\n Coordinate : 0\n Height : 16\n Sitewidth : 1\n"
             " Sitespacing : 1\n SubrowOrigin : 0 NumSites : 96\nEnd\nCoreRow Horizontal\n Coordinate : 16\n"
             " Height : 16\n Sitewidth : 1\n Sitespacing : 1\n SubrowOrigin : 0 NumSites : 96\nEnd\n",
    "t.wts": "UCLA wts 1.0\n a0 1\n",
}


def _netlist(obj: Any) -> None:
    assert obj.n_macros >= 2 and obj.n_nets >= 1 and np.all(np.isfinite(obj.w))


def _bookshelf(target: str, rule: str) -> FileLoaderCase:
    others = tuple(f for f in ("t.nodes", "t.nets", "t.pl", "t.scl") if f != target
                   and (f != "t.scl" or rule == "taller_than_rows"))
    optional = ("t.wts",) + (("t.scl",) if rule == "terminals" else ())
    return FileLoaderCase(
        f"egplace.read_bookshelf[{target[2:]},{rule}]", "icml25.egplace.read_bookshelf", _files(BOOK, "t.aux"),
        "text", target=target, companions=others if target == "t.aux" else (),
        optional_companions=optional if target == "t.aux" else (), numbers=target != "t.aux",
        call=lambda f, p: f(p, macro_rule=rule), validate=_netlist)


# --------------------------------------------------------------------------------------------------------- spikf
SERIES = "date,OT,HUFL\n" + "".join(f"2016-07-01 {h:02d}:00:00,{h * 0.5:.1f},{10 - h:.2f}\n" for h in range(8))


def _series(obj: Any) -> None:
    arr, cols = obj[0], obj[1]
    assert arr.ndim == 2 and arr.shape[1] == len(cols) >= 1 and len(arr) >= 1 and np.isfinite(arr).all()


# ----------------------------------------------------------------------------------------------------------- npz
def _cgcivl_npz(folder: Path) -> Path:
    rng = np.random.default_rng(0)
    p = folder / "pointmaze.npz"
    np.savez_compressed(p, observations=rng.uniform(0, 5, (20, 2)).astype(np.float32),
                        actions=rng.uniform(-1, 1, (20, 2)).astype(np.float32),
                        terminals=np.r_[np.zeros(9), 1.0, np.zeros(9), 1.0].astype(np.float32))
    return p


def _dataset(obj: Any) -> None:
    assert {"observations", "actions", "terminals"} <= set(obj) and len(obj["observations"]) >= 2
    assert np.isfinite(obj["observations"]).all() and np.isfinite(obj["actions"]).all()


def _teduo_npz(folder: Path) -> Path:
    from icml25.teduo.babyai import SymbolicState
    from icml25.teduo.data import OfflineDataset

    def state(x: int) -> Any:
        return SymbolicState(x, 2, 0, None, (("red", "key", 4, 4),))

    eps = [{"observations": [state(1), state(2), state(3)], "actions": np.array([2, 2]), "seed": i} for i in range(2)]
    return OfflineDataset(eps, ["pick up the red key"], "BabyAI-PickupLoc-v0").save(folder / "babyai.npz")


def _offline(obj: Any) -> None:
    assert len(obj.episodes) == 2 and obj.n_transitions == 4 and obj.goals


def _sdp_npz(folder: Path) -> Path:
    from icml25.core.data import shipped_path

    return Path(shutil.copy(shipped_path("sdp_crown", "cifar10_cnn_c.npz"), folder / "cnn_c.npz"))


def _torch_model(obj: Any) -> None:
    import torch

    assert all(torch.isfinite(p).all() for p in obj.parameters())


# ---------------------------------------------------------------------------------------------------------- croq
COUNTRIES = "".join(json.dumps({"country": c, "capital": k, "continent": o, "currency": "x"}) + "\n" for c, k, o in [
    ("France", "Paris", "Europe"), ("Spain", "Madrid", "Europe"), ("Peru", "Lima", "South America"),
    ("Chile", "Santiago", "South America"), ("Japan", "Tokyo", "Asia")])
TRUTHFULQA = ("Type,Category,Question,Best Answer,Correct Answers,Incorrect Answers,Source\n"
              + "".join(f"Adversarial,Misconceptions,Question {i}?,Answer {i},Answer {i},Wrong {i}a; Wrong {i}b,"
                        f"https://example.org/{i}\n" for i in range(5)))
TOOL = [{"Name": f"api{i}", "Function_Description": {"get": "Get a thing.\nMore.", "put": "Put a thing."},
         "Instructions": ["get the thing", "put the thing"],
         "Golden_Answers": [[{"Action": "get", "Action_Input": "{}"}], [{"Action": "put", "Action_Input": "{}"}]]}
        for i in range(3)]
MMLU = ("question;choices;answer;error_type;source\n"
        + "".join(f"Question {i}?;\"['a{i}', 'b{i}', 'c{i}', 'd{i}']\";{i % 4};ok;src\n" for i in range(6)))


def _mcq_rows(obj: Any) -> None:
    assert isinstance(obj, list) and obj and all(len(r["choices"]) == 4 for r in obj)


# ---------------------------------------------------------------------------------------------- other papers
NUMBER_WORDS = {lang: [f"{lang}{i}" for i in range(1000)] for lang in ("en", "fr", "es", "de", "zh")}
MATH = [{"index": i, "question": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(4)]
GSM = "".join(json.dumps({"question": f"Q{i}?", "answer": f"It is <<{i}+1={i + 1}>>{i + 1}.\n#### {i + 1}"}) + "\n"
              for i in range(4))
ARFF = ("@RELATION imclef\n@ATTRIBUTE f1 numeric\n@ATTRIBUTE f2 numeric\n"
        "@ATTRIBUTE class hierarchical a,a/b,a/c,d,d/e\n@DATA\n"
        "0.5,1.5,a@a/b\n0.25,2,a@a/c\n1,3.5,d@d/e\n0,0.75,a@a/b\n")
HIERARCHY = json.dumps({"children": [["r", ["a", "b"]], ["a", ["x", "y"]]], "leaf_order": ["x", "y", "b"]})
GLUE_SST2 = "sentence\tlabel\n" + "".join(f"a sentence number {i} .\t{i % 2}\n" for i in range(6))
ADULT = ("age,workclass,education_num,hr_per_week,sex,income\n"
         + "".join(f"{30 + i},Private,{9 + i % 4},{40 + i},{'Male' if i % 2 else 'Female'},{'>50K' if i % 3 else '<=50K'}\n"
                   for i in range(8)))
PIMA = ("Pregnancies,Glucose,BloodPressure,BMI,DiabetesPedigreeFunction,Age,Outcome\n"
        + "".join(f"{i},{100 + 5 * i},70,{25 + i}.5,0.{i + 1},{25 + 3 * i},{i % 2}\n" for i in range(8)))
MONKEYS = ("model,params,benchmark,problem_idx,num_samples,num_correct\n"
           + "".join(f"pythia-{m},{p},MATH,{j},100,{(j * 7 + p) % 50}\n" for m, p in (("70m", 70), ("160m", 160))
                     for j in range(4)))
CHECKPOINTS = ("model_nickname,params,train_tokens,benchmark,problem_idx,level,num_samples,num_correct\n"
               + "".join(f"pythia-70m-{t},70000000,{t},MATH,{j},1,100,{j}\n" for t in (1000, 2000) for j in range(4)))
CURVE = "x,y\n1,0.1\n10,0.3\n100,0.5\n1000,0.62\n"
TREES = json.dumps({"test.tree.1": {"root": "A", "edges": [["A", "B"], ["A", "C"], ["C", "D"]]}})
COMBINATION = "0.5,0.25,0.25\n0.25,0.5,0.25\n0.25,0.25,0.5\n"


def _arrays(n: int) -> Callable[[Any], None]:
    def validate(obj: Any) -> None:
        assert len(obj) == n and all(np.asarray(a).size for a in obj)
    return validate


def _arff(obj: Any) -> None:
    X, labels, paths = obj
    assert X.shape == (len(labels), 2) and len(labels) >= 1 and paths


def _glue(obj: Any) -> None:
    assert len(obj) >= 1 and len(obj.labels) == len(obj.text_a) and np.isfinite(obj.labels).all()


def _xy(obj: Any) -> None:
    X, y, names = obj
    assert len(X) == len(y) >= 1 and X.shape[1] == len(names) and np.isfinite(X).all()


def _curve(obj: Any) -> None:
    k, y = obj
    assert len(k) == len(y) >= 1 and np.isfinite(k).all() and np.isfinite(y).all()


def _matrix(obj: Any) -> None:
    assert obj.shape == (3, 3) and np.allclose(obj.sum(axis=0), 1.0)


def _graph(obj: Any) -> None:
    assert obj.number_of_nodes() == 4 and obj.number_of_edges() == 3


def _words(obj: Any) -> None:
    assert isinstance(obj, dict) and set(obj) == set(NUMBER_WORDS) and all(len(v) == 1000 for v in obj.values())


def _countries(obj: Any) -> None:
    assert len(obj) >= 1 and all(r["country"] and r["capital"] and r["continent"] for r in obj)


# ----------------------------------------------------------------------------------------------------------- llm
def _tiny_model(folder: Path) -> Path:
    from icml25.llm.tiny import TinyGPT, TinyGPTConfig
    from icml25.llm.tokenizers import CharTokenizer

    tok = CharTokenizer.from_texts(["abc def"])
    TinyGPT(TinyGPTConfig(n_layer=1, n_head=1, n_embd=8, block_size=16), tok).save(folder / "tiny")
    return folder / "tiny"


def _tokenizer_file(folder: Path) -> Path:
    from icml25.llm.tokenizers import CharTokenizer

    CharTokenizer.from_texts(["abc def"]).save(folder / "tokenizer.json")
    return folder / "tokenizer.json"


def _hf_folder(folder: Path) -> Path:
    from icml25.llm.hf import save_random_gpt2

    return save_random_gpt2(folder / "hf", ["abc def ghi"] * 3, n_layer=1, n_embd=8, n_head=1, n_positions=16)


def _lm(obj: Any) -> None:
    assert obj.next_token_logits(["a"]).shape[0] == 1


def _image_folder(folder: Path) -> Path:
    from PIL import Image

    for name, colour in (("a.png", (255, 0, 0)), ("b.png", (0, 255, 0))):
        Image.new("RGB", (12, 10), colour).save(folder / name)
    return folder


CASES: list[FileLoaderCase] = [
    _bookshelf("t.aux", "terminals"), _bookshelf("t.nodes", "terminals"), _bookshelf("t.nets", "terminals"),
    _bookshelf("t.pl", "terminals"), _bookshelf("t.aux", "taller_than_rows"),
    _bookshelf("t.scl", "taller_than_rows"),
    FileLoaderCase("spikf.read_csv_series", "icml25.spikf.read_csv_series", _text("ETTh1.csv", SERIES), "csv",
                   validate=_series),
    FileLoaderCase("spikf.load_benchmark", "icml25.spikf.load_benchmark", _text("weather.csv", SERIES), "csv",
                   call=lambda f, p: f("weather", path=p), validate=_series),
    FileLoaderCase("cgcivl.load_dataset", "icml25.cgcivl.load_dataset", _cgcivl_npz, "npz", validate=_dataset),
    FileLoaderCase("teduo.OfflineDataset.load", "icml25.teduo.OfflineDataset.load", _teduo_npz, "npz",
                   numbers=False, validate=_offline),
    FileLoaderCase("sdp_crown.load_model", "icml25.sdp_crown.load_model", _sdp_npz, "npz",
                   call=lambda f, p: f("cifar10_cnn_c", path=p), validate=_torch_model, requires=("torch",)),
    FileLoaderCase("croq.load_countries", "icml25.croq.load_countries", _text("countries.jsonl", COUNTRIES), "jsonl",
                   numbers=False, required_field="capital", validate=_countries),
    FileLoaderCase("croq.load_truthfulqa", "icml25.croq.load_truthfulqa", _text("TruthfulQA.csv", TRUTHFULQA), "csv",
                   numbers=False, required_field="Incorrect Answers", validate=_is(list)),
    FileLoaderCase("croq.load_toolalpaca", "icml25.croq.load_toolalpaca",
                   _files({"eval_real.json": json.dumps(TOOL, indent=1),
                           "eval_simulated.json": json.dumps(TOOL[:2], indent=1)}), "json", target="eval_real.json",
                   companions=("eval_simulated.json",), numbers=False, required_field="Function_Description",
                   validate=_is(list, 5)),
    FileLoaderCase("croq.load_mmlu_redux", "icml25.croq.load_mmlu_redux", _files({"mmlu_anatomy.csv": MMLU}),
                   "csv", target="mmlu_anatomy.csv", delimiter=";", call=lambda f, p: f(["anatomy"], path=p),
                   tolerant=("wrong_delimiter",), validate=_mcq_rows),
    FileLoaderCase("task_superposition.load_countries", "icml25.task_superposition.load_countries",
                   _text("countries.jsonl", COUNTRIES), "jsonl", numbers=False, required_field="capital",
                   validate=_countries),
    FileLoaderCase("task_superposition.load_number_words", "icml25.task_superposition.load_number_words",
                   _text("number_words.json", json.dumps(NUMBER_WORDS)), "json", numbers=False, validate=_words),
    FileLoaderCase("task_superposition.load_words", "icml25.task_superposition.load_words",
                   _text("nouns.txt", "apple\nbanana\ncarrot\ndog\n"), "text", numbers=False,
                   tolerant=("oversize_line",), validate=_is(tuple)),
    FileLoaderCase("rstar_math.load_benchmark", "icml25.rstar_math.load_benchmark",
                   _text("math500_test.json", json.dumps(MATH, indent=4)), "json", required_field="answer",
                   call=lambda f, p: f("math500", path=p), validate=_is(list)),
    FileLoaderCase("rstar_math.load_gsm8k_annotated", "icml25.rstar_math.load_gsm8k_annotated",
                   _text("test.jsonl", GSM), "jsonl", numbers=False, required_field="answer", validate=_is(list)),
    FileLoaderCase("hier_decoding.read_hierarchical_arff", "icml25.hier_decoding.read_hierarchical_arff",
                   _text("ImCLEF07A_Train.arff", ARFF), "text", nan_ok=True, validate=_arff),
    FileLoaderCase("hier_decoding.Hierarchy.from_json", "icml25.hier_decoding.Hierarchy.from_json",
                   _text("tree.json", HIERARCHY), "json", numbers=False, required_field="children",
                   validate=lambda h: None if h.n_leaves == 3 else (_ for _ in ()).throw(AssertionError("leaves"))),
    FileLoaderCase("sorbet.load_glue_task", "icml25.sorbet.load_glue_task", _files({"SST-2/dev.tsv": GLUE_SST2}),
                   "tsv", target="SST-2/dev.tsv", call=lambda f, p: f("sst2", "dev", root=p), validate=_glue),
    FileLoaderCase("label_dp.load_adult", "icml25.label_dp.load_adult", _text("adult.csv", ADULT), "csv",
                   required_field="income", validate=_xy),
    FileLoaderCase("label_dp.load_pima", "icml25.label_dp.load_pima", _text("pima.csv", PIMA), "csv",
                   required_field="Outcome", validate=_xy),
    FileLoaderCase("inference_scaling.load_llmonkeys_pythia_math", "icml25.inference_scaling.load_llmonkeys_pythia_math",
                   _text("monkeys.csv", MONKEYS), "csv", validate=_is(dict)),
    FileLoaderCase("inference_scaling.load_pythia_checkpoints", "icml25.inference_scaling.load_pythia_checkpoints",
                   _text("checkpoints.csv", CHECKPOINTS), "csv", validate=_is(list)),
    FileLoaderCase("inference_scaling.load_digitized_curve", "icml25.inference_scaling.load_digitized_curve",
                   _text("curve.csv", CURVE), "csv", call=lambda f, p: f("Gemma-2B", path=p), validate=_curve),
    FileLoaderCase("sis_vaccination.load_outbreak_tree", "icml25.sis_vaccination.load_outbreak_tree",
                   _text("trees.json", TREES), "json", numbers=False, required_field="edges",
                   call=lambda f, p: f("test.tree.1", path=p), validate=_graph),
    FileLoaderCase("manifold_diffusion.paper_combination_matrix",
                   "icml25.manifold_diffusion.paper_combination_matrix", _text("A.csv", COMBINATION), "csv",
                   header=False, call=lambda f, p: f("metropolis", path=p), validate=_matrix),
    FileLoaderCase("llm.load_model[tiny config.json]", "icml25.llm.load_model", _tiny_model, "json",
                   target="config.json", companions=("tokenizer.json", "model.pt"), call=lambda f, p: f(f"tiny:{p}"),
                   validate=_lm, requires=("torch",)),
    FileLoaderCase("llm.load_model[tiny model.pt]", "icml25.llm.load_model", _tiny_model, "binary",
                   target="model.pt", call=lambda f, p: f(f"tiny:{p}"), validate=_lm, requires=("torch",)),
    FileLoaderCase("llm.load_tokenizer", "icml25.llm.load_tokenizer", _tokenizer_file, "json", numbers=False,
                   required_field="chars", validate=lambda t: None if t.vocab_size > 3 else
                   (_ for _ in ()).throw(AssertionError("vocabulary"))),
    FileLoaderCase("llm.HFModel[config.json]", "icml25.llm.hf.HFModel", _hf_folder, "json", target="config.json",
                   companions=("model.safetensors", "tokenizer.json"), validate=_lm,
                   requires=("torch", "transformers", "tokenizers")),
    FileLoaderCase("cat.load_image_folder", "icml25.cat.load_image_folder", _image_folder, "binary", target="b.png",
                   call=lambda f, p: f(p, resolution=8), validate=lambda a: None if a.shape == (2, 3, 8, 8) else
                   (_ for _ in ()).throw(AssertionError(a.shape)), requires=("PIL",)),
]

# the shared helpers every loader above reads through (icml25.core.files) keep the contract on their own
CASES += [
    FileLoaderCase("core.files.read_csv", "icml25.core.files.read_csv", _text("t.csv", SERIES), "csv",
                   call=lambda f, p: f(p, "a CSV with columns date, OT, HUFL", required=("date", "OT", "HUFL")),
                   nan_ok=True, validate=lambda t: None),
    FileLoaderCase("core.files.read_jsonl", "icml25.core.files.read_jsonl", _text("c.jsonl", COUNTRIES), "jsonl",
                   numbers=False, required_field="capital", validate=lambda t: None,
                   call=lambda f, p: f(p, "country records", required=("country", "capital"))),
    FileLoaderCase("core.files.read_json", "icml25.core.files.read_json", _text("m.json", json.dumps(MATH)), "json",
                   call=lambda f, p: f(p, "a list of records"), tolerant=("missing_field",), validate=lambda t: None),
    FileLoaderCase("core.files.read_npz", "icml25.core.files.read_npz", _cgcivl_npz, "npz", nan_ok=True,
                   call=lambda f, p: f(p, "arrays", required=("observations", "actions", "terminals")),
                   validate=lambda t: None),
]

#: loader x variant whose fix is not in yet (strict xfail: the test fails once the fix lands, so this is emptied)
PENDING: dict[str, set[str]] = {}
PARAMS = [pytest.param(c, v, id=f"{c.name}-{v}", marks=[pytest.mark.xfail(strict=True, reason="fix pending")]
                       if v in PENDING.get(c.name, ()) else [])
          for c in CASES for v in ["valid", *variants(c)]]


def test_registry_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case,variant", PARAMS)
def test_loader_rejects_malformed_file(case: FileLoaderCase, variant: str, tmp_path: Path) -> None:
    for module in case.requires:
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{case.name} needs {module}")
    check_variant(case, variant, tmp_path)


def test_harness_flags_a_leaking_and_a_partial_loader(tmp_path: Path) -> None:
    """The contract is not vacuous: a bare ``json.loads`` loader leaks, a forgiving one returns a partial object."""
    leaky = FileLoaderCase("leaky", lambda p: json.loads(Path(p).read_text()), _text("q.json", json.dumps(MATH)),
                           "json")
    res = run_variant(leaky, "empty", tmp_path / "a")
    assert res.outcome == "raised" and any("last frame" in p for p in res.problems)
    assert any("does not name the file" in p for p in res.problems)
    forgiving = FileLoaderCase("forgiving", lambda p: [], _text("q.json", json.dumps(MATH)), "json")
    res = run_variant(forgiving, "truncated", tmp_path / "b")
    assert res.outcome == "loaded" and not res.problems  # a truncated file may load (documented) ...
    res = run_variant(forgiving, "empty", tmp_path / "c")
    assert res.problems == ["returned a list for a malformed file instead of raising"]  # ... an empty one may not


def test_variants_per_kind() -> None:
    csv_case = next(c for c in CASES if c.name == "spikf.read_csv_series")
    assert variants(csv_case) == ["empty", "truncated", "wrong_delimiter", "latin1", "utf16", "binary",
                                  "missing_field", "nan", "directory", "oversize_line"]
    npz_case = next(c for c in CASES if c.name == "cgcivl.load_dataset")
    assert variants(npz_case) == ["empty", "truncated", "binary", "missing_field", "nan", "directory"]

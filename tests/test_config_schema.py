"""The one typed configuration: every table checked, misspelled keys refused naming the file and the
key, no default outside conf/, factories built from the typed Config."""

from __future__ import annotations

import copy
import dataclasses
import typing

import pytest

from deid_core.config import Config, ConfigError, conf_dir, conf_file, load_config
from deid_core.config.effective import TABLES, Layer, base_layers, from_layers

# One misspelled or wrong key per table: (tables as a --config file would hold them, [table] key in the message).
MISSPELLED = [
    ({"pipeline": {"stagse": ["rules"]}}, "[pipeline] unknown key 'stagse'; accepted: stages, merge, mode"),
    ({"registry": {"stage": {"x": "a:b"}}}, "[registry] unknown key 'stage'; accepted: stages, modes, merge"),
    ({"rules": {"min_aeg": 80}}, "[rules] unknown key 'min_aeg'; accepted: files, "),
    ({"merge": {"rule_gaet": 0.1}}, "[merge] unknown key 'rule_gaet'; accepted: priority, "),
    ({"job": {"batchsize": 5}}, "[job] unknown key 'batchsize'; accepted: batch_size, "),
    ({"job": {"retry_quarantine": ["tag"]}}, "[job] unknown key 'retry_quarantine'; accepted: batch_size, "),
    ({"testing": {"fault_marker": "X"}}, "[testing] unknown key 'fault_marker'; accepted: fault_note_marker"),
    ({"testing": {"pause_after": "notes"}}, "[testing] unknown key 'pause_after'; accepted: fault_note_marker, "),
    ({"crf": {"tagging": {"marginal_treshold": 0.3}}},
     "[crf.tagging] unknown key 'marginal_treshold'; accepted: marginal_threshold, "),
    ({"crf": {"tagging": {"scorrer": "numpy"}}}, "[crf.tagging] unknown key 'scorrer'; accepted: "),
    ({"crf": {"labels": {"schema": "BIO"}}}, "[crf.labels] unknown key 'schema'; accepted: scheme, map"),
    ({"crf": {"models": {"single": {"window_size": 3}}}}, "[crf.models.single] unknown key 'window_size'; accepted: kind, "),
    ({"crf": {"training": {"c3": 0.1}}}, "[crf.training] unknown key 'c3'; accepted: models, "),
    ({"crf": {"clusters": {"kk": [3]}}}, "[crf.clusters] unknown key 'kk'; accepted: min_count, "),
    ({"surrogates": {"profle": "safe_harbor"}}, "[surrogates] unknown key 'profle'; accepted: profile, "),
    ({"surrogates": {"dates": {"shift_min": -3}}}, "[surrogates.dates] unknown key 'shift_min'; accepted: "),
    ({"surrogates": {"zip": {"polcy": "surrogate"}}}, "[surrogates.zip] unknown key 'polcy'; accepted: policy, "),
    ({"job": {"progress_intervals_s": 5}}, "[job] unknown key 'progress_intervals_s'; accepted: batch_size, "),
    ({"colour": {"x": 1}}, "unknown table 'colour'; accepted: pipeline, registry, rules, merge, names, job, testing, model, crf, "),
]

WRONG = [
    ({"pipeline": {"stages": ["rules", "crff"]}},
     "[pipeline] stages[1] = 'crff' is not accepted; expected a stage of [registry.stages] (crf, crf_char, names, rules)"),
    ({"pipeline": {"stages": "rules"}}, "[pipeline] stages = 'rules' is not accepted; expected a list of strings"),
    ({"pipeline": {"merge": "unoin"}}, "[pipeline] merge = 'unoin' is not accepted; expected one of cascade, "),
    ({"registry": {"modes": {"mask": "no-colon"}}},
     "[registry.modes] mask = 'no-colon' is not accepted; expected 'package.module:attribute'"),
    ({"rules": {"metadata": "yes"}}, "[rules] metadata = 'yes' is not accepted; expected true or false"),
    ({"merge": {"rule_gate": 2}}, "[merge] rule_gate = 2 is not accepted; expected a number from 0 to 1"),
    ({"merge": {"propagate_categories": ["NAMES"]}},
     "[merge] propagate_categories[0] = 'NAMES' is not accepted; expected a category of conf/taxonomy.toml"),
    ({"job": {"batch_size": "100"}}, "[job] batch_size = '100' is not accepted; expected an integer >= 1"),
    ({"job": {"retry_quarantined": ["tag", "replcae"]}},
     "[job] retry_quarantined[1] = 'replcae' is not accepted; expected one of validate, tag, replace"),
    ({"testing": {"pause_after_write": "note"}},
     "[testing] pause_after_write = 'note' is not accepted; expected '' (off), notes, spans or quarantine"),
    ({"job": {"max_quarantine_rate": 1.5}},
     "[job] max_quarantine_rate = 1.5 is not accepted; expected a number from 0 to 1"),
    ({"job": {"progress_interval_s": -1}}, "[job] progress_interval_s = -1 is not accepted; expected a number >= 0"),
    ({"crf": {"tagging": {"domain": "physionet"}}},
     "[crf.tagging] domain = 'physionet' is not accepted; expected one of target, source, general"),
    ({"crf": {"tagging": {"scorer": "viterbi"}}},
     "[crf.tagging] scorer = 'viterbi' is not accepted; expected one of numpy, crfsuite"),
    ({"crf": {"tagging": {"batch_tokens": 0}}}, "[crf.tagging] batch_tokens = 0 is not accepted; expected an integer >= 1"),
    ({"crf": {"labels": {"scheme": "BIOE"}}}, "[crf.labels] scheme = 'BIOE' is not accepted; expected one of IOB1, "),
    ({"crf": {"training": {"models": ["single", "nope"]}}},
     "[crf.training] models[1] = 'nope' is not accepted; expected a [models.*] table"),
    ({"surrogates": {"label_modes": {"DOKTOR": "mask"}}},
     "[surrogates.label_modes] DOKTOR = 'DOKTOR' is not accepted; expected a label of conf/taxonomy.toml"),
    ({"surrogates": {"label_modes": {"DOCTOR": "erase"}}},
     "[surrogates.label_modes] DOCTOR = 'erase' is not accepted; expected one of surrogate, mask, redact, hash"),
    ({"surrogates": {"generators": {"DOCTOR": "nmae"}}},
     "[surrogates.generators] DOCTOR = 'nmae' is not accepted; expected one of name, username, "),
    ({"surrogates": {"dates": {"holiday_dates": {"xmas": "Dec 25"}}}},
     "[surrogates.dates.holiday_dates] xmas = 'Dec 25' is not accepted; expected 'MM-DD' or ''"),
    ({"surrogates": {"dates": {"formats": [{"name": "iso"}]}}},
     "[surrogates.dates.formats[0]] pattern is missing; expected a string"),
]


def _write(tmp_path, tables: dict) -> str:
    lines: list[str] = []

    def emit(prefix: str, table: dict) -> None:
        scalars = {k: v for k, v in table.items() if not isinstance(v, dict)}
        if scalars or not table:
            lines.append(f"[{prefix}]")
            for k, v in scalars.items():
                lines.append(f"{_key(k)} = {_toml(v)}")
        for k, v in table.items():
            if isinstance(v, dict):
                emit(f"{prefix}.{_key(k)}", v)

    for name, table in tables.items():
        emit(name, table)
    path = tmp_path / "job.toml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() else f'"{k}"'


def _toml(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_inline(x) if isinstance(x, dict) else _toml(x) for x in v) + "]"
    return repr(v)


def _inline(d: dict) -> str:
    return "{" + ", ".join(f"{_key(k)} = {_toml(v)}" for k, v in d.items()) + "}"


@pytest.mark.parametrize("tables, message", MISSPELLED + WRONG)
def test_config_file_errors_name_the_file_the_table_key_and_what_is_accepted(tmp_path, tables, message):
    path = _write(tmp_path, tables)
    with pytest.raises(ConfigError) as exc:
        load_config(config_file=path)
    assert str(exc.value).startswith(f"--config {path}: "), str(exc.value)
    assert message in str(exc.value), str(exc.value)


@pytest.mark.parametrize("tables, message", MISSPELLED[:3] + WRONG[:3])
def test_override_errors_name_the_command_line(tables, message):
    with pytest.raises(ConfigError) as exc:
        load_config(tables)
    assert str(exc.value).startswith("command-line options: ") and message in str(exc.value)


def test_a_value_is_blamed_on_the_layer_that_holds_it(tmp_path):
    """The file with the bad value is named, not the last layer merged over it."""
    bad_file = _write(tmp_path, {"merge": {"rule_gate": 2}})
    with pytest.raises(ConfigError, match=r"^--config .*job\.toml: \[merge\] rule_gate = 2 is not accepted"):
        load_config({"merge": {"propagate": False}}, config_file=bad_file)
    good_file = _write(tmp_path, {"merge": {"propagate": False}})
    with pytest.raises(ConfigError, match=r"^command-line options: \[merge\] rule_gate = 2 is not accepted"):
        load_config({"merge": {"rule_gate": 2}}, config_file=good_file)
    cfg = load_config({"crf": {"tagging": {"marginal_threshold": 0.5}}}, config_file=good_file)
    assert cfg.merge.propagate is False and cfg.crf.tagging.marginal_threshold == 0.5


def test_crf_file_errors_name_the_crf_file(tmp_path):
    crf = tmp_path / "crf.toml"
    crf.write_text((conf_dir() / "crf.toml").read_text().replace("marginal_threshold", "marginal_treshold"))
    with pytest.raises(ConfigError, match=r"^--crf-config .*crf\.toml: \[tagging\] unknown key 'marginal_treshold'"):
        load_config(crf_file=crf)


def test_the_schema_has_no_defaults_of_its_own():
    """Every key of every table class is required: the conf/ files are the only defaults."""
    seen: set[type] = set()

    def walk(cls: type) -> None:
        if cls in seen:
            return
        seen.add(cls)
        for f in dataclasses.fields(cls):
            if cls is Config and f.name == "layers":  # where the values came from, not a table
                continue
            assert f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING, \
                f"{cls.__name__}.{f.name} has a default"
            for tp in _types(typing.get_type_hints(cls, include_extras=True)[f.name]):
                if isinstance(tp, type) and dataclasses.is_dataclass(tp):
                    walk(tp)

    walk(Config)
    assert len(seen) >= 20  # pipeline ... surrogates.locations: every table is a class


def _types(tp) -> list:
    out = [tp]
    for arg in typing.get_args(tp):
        out.extend(_types(arg))
    return out


# Tables whose keys are names (stages, labels, patterns), not keys of the schema.
NAME_TABLES = {("registry", "stages"), ("registry", "modes"), ("registry", "merge"), ("crf", "labels", "map"),
               ("crf", "models"), ("surrogates", "label_modes"), ("surrogates", "generators"),
               ("surrogates", "dates", "holiday_dates"), ("surrogates", "profiles"),
               ("merge", "id_fields"), ("merge", "contact_fields")}
# Name tables whose entries are tables of the schema (their keys are checked, not their names).
NAMED_SCHEMA_TABLES = {("crf", "models"), ("surrogates", "profiles")}


def _key_paths(table: dict, prefix: tuple[str, ...] = ()):
    """Every schema key of the conf/ files, as a path (model tables: their keys, not their names)."""
    for k, v in table.items():
        path = (*prefix, k)
        if prefix in NAME_TABLES and prefix not in NAMED_SCHEMA_TABLES:
            continue
        if prefix not in NAMED_SCHEMA_TABLES:
            yield path
        if isinstance(v, dict):
            yield from _key_paths(v, path)


CONF_KEYS = [p for p in _key_paths({**conf_file("deidentify.toml"), "crf": conf_file("crf.toml"),
                                     **conf_file("surrogates.toml")}) if len(p) >= 2]


@pytest.mark.parametrize("path", CONF_KEYS, ids=[".".join(p) for p in CONF_KEYS])
def test_removing_a_key_from_conf_makes_loading_fail_naming_it(path):
    layers = [Layer(lay.name, copy.deepcopy(dict(lay.tables)), lay.prefix, lay.in_document) for lay in base_layers()]
    target = next(lay for lay in layers if path[0] in lay.tables)
    node = target.tables
    for k in path[:-1]:
        node = node[k]
    del node[path[-1]]
    with pytest.raises(ConfigError) as exc:
        from_layers(tuple(layers))
    msg = str(exc.value)
    assert msg.startswith(target.name + ":") and f"{path[-1]} is missing" in msg, msg


def test_shipped_configurations_load():
    """conf/ alone, the PhysioNet profile and the test configurations."""
    from tests.helpers_job import LITERAL_CONF

    assert load_config().pipeline.stages == ("rules", "crf", "names")
    assert load_config(config_file=conf_dir() / "profiles" / "physionet.toml").crf.tagging.domain == "target"
    assert load_config(config_file=LITERAL_CONF).pipeline.stages == ("literal",)
    assert load_config(config_file=LITERAL_CONF.parent / "fault.toml").testing.fault_note_marker == "FAULTME"
    assert set(TABLES) == {"pipeline", "registry", "rules", "merge", "names", "job", "testing", "model", "crf",
                           "surrogates"}


def test_digest_covers_the_job_document_and_changes_with_it():
    base = load_config()
    assert base.digest == load_config().digest
    assert base.override({"job": {"batch_size": 7}}).digest != base.digest
    assert base.document["pipeline"] == conf_file("deidentify.toml")["pipeline"]
    assert "crf" not in base.document and "surrogates" not in base.document  # their own files: code-versioned
    assert "crf" in load_config(config_file=conf_dir() / "profiles" / "physionet.toml").document


def test_every_factory_builds_from_the_typed_config():
    """Each [registry.*] entry is a factory taking the typed Config (no raw dict, no code default)."""
    from deid_core.bundle import load_bundle
    from deid_core.engine.registry import resolve

    config = load_config()
    bundle = load_bundle()
    for name, ref in config.registry.stages.items():
        if name == "crf_char":  # the default bundle has no char model: refused, naming the stage
            with pytest.raises(Exception, match="crf_char"):
                resolve(ref)(config, bundle)
            continue
        stage = resolve(ref)(config, bundle)
        assert stage.name == name
    for name, ref in config.registry.modes.items():
        assert resolve(ref)(config, b"k" * 32).default_mode == name
    for ref in config.registry.merge.values():
        resolve(ref)(config)


def test_a_cache_of_one_entry_is_refused_by_the_configuration_check():
    """The CRF caches turn in two generations of cache_size // 2: a size of 1 is named as the setting, not
    as an engine error when the first stage is built."""
    with pytest.raises(ConfigError, match=r"\[crf\.tagging\] cache_size = 1 is not accepted; expected an integer >= 2"):
        load_config({"crf": {"tagging": {"cache_size": 1}}})
    assert load_config({"crf": {"tagging": {"cache_size": 2}}}).crf.tagging.cache_size == 2


@pytest.mark.parametrize("key", ["propagate_kin_words", "propagate_cue_words"])
@pytest.mark.parametrize("blank", ["", "  "])
def test_a_blank_kin_or_cue_word_is_refused_by_the_configuration_check(key, blank):
    """A blank phrase compiled to an empty alternative that matched before every name (any DOCTOR became
    PATIENT), and the merge's word-end shortcuts skip it: refused with the configuration instead."""
    with pytest.raises(ConfigError, match=rf"\[merge\] {key}\[1\] = '{blank}' is not accepted; expected a word"):
        load_config({"merge": {key: ["son", blank]}})


@pytest.mark.parametrize(("tables", "message"), [
    # a blank recipient word would cut a CRF span at every blank after punctuation
    ({"merge": {"recipient_words": [""]}}, "[merge] recipient_words[0] = '' is not accepted; expected a word or phrase"),
    ({"merge": {"recipient_words": ["attn", "  "]}}, "[merge] recipient_words[1] = '  ' is not accepted"),
    ({"merge": {"name_particles": [""]}}, "[merge] name_particles[0] = '' is not accepted; expected a word or phrase"),
    ({"names": {"cues": {"line_credentials": [" "]}}}, "[names.cues] line_credentials[0] = ' ' is not accepted"),
    # a credential is one token: 'p t' could never match
    ({"names": {"cues": {"line_credentials": ["p t"]}}},
     "[names.cues] line_credentials[0] = 'p t' is not accepted; expected one word (no blank)"),
])
def test_blank_words_and_phrases_are_refused(tables, message):
    with pytest.raises(ConfigError) as exc:
        load_config(tables)
    assert message in str(exc.value), str(exc.value)


@pytest.mark.parametrize("table,key", [("merge", "place_lead_words"), ("names.cues", "kin_states")])
def test_one_word_lists_refuse_blanks_and_phrases(table, key):
    """Entries of these lists are compared with one token: a blank or two-word entry could never match."""
    section, *sub = table.split(".")
    for bad in ([""], ["works for"]):
        tables = {section: {sub[0]: {key: bad}} if sub else {key: bad}}
        with pytest.raises(ConfigError, match=key):
            load_config(tables)


@pytest.mark.parametrize(("fields", "message"), [
    # a field word gives an id its label: a label outside category ID would turn an MRN into a name
    ({"DOCTOR": ["mrn"]}, "[merge.id_fields] DOCTOR = 'DOCTOR' is not accepted; expected a label of category ID"),
    # one field word under two labels: the label it gave depended on the labels' order
    ({"IDNUM": ["mrn"], "MEDICALRECORD": ["MRN"]},
     "[merge] id_fields = "),
])
def test_field_words_name_id_labels_one_label_each(fields, message):
    with pytest.raises(ConfigError) as exc:
        load_config({"merge": {"id_fields": fields}})
    assert message in str(exc.value), str(exc.value)


def test_a_clinician_role_longer_than_the_window_before_a_name_is_refused():
    """Review 15: [merge] clinician_roles are read in the 12 characters before a PATIENT span (the word and a blank):
    a longer role ("anesthesiologist") could never match and was silently dead; refused with the configuration."""
    with pytest.raises(ConfigError, match=r"\[merge\] clinician_roles\[1\] = 'anesthesiologist' is not accepted"):
        load_config({"merge": {"clinician_roles": ["nurse", "anesthesiologist"]}})
    assert load_config({"merge": {"clinician_roles": ["intensivist"]}}).merge.clinician_roles == ("intensivist",)

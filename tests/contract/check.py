"""Contract checker: validates JSON values against the models of Equinix's official Python SDK.

Run with the interpreter that .ci/install-contract-sdk sets up (equinix==0.20.0, jsonschema):

    target/contract-venv/bin/python tests/contract/check.py CASES.json
    target/contract-venv/bin/python tests/contract/check.py --self-test
    target/contract-venv/bin/python tests/contract/check.py --enums ConnectionType,SimplifiedNotification.type

CASES.json is a JSON array of {"label": str, "model": str, "value": any}. `model` names a model
of equinix.services.fabricv4 (ConnectionPostRequest, Connection, Metro, ...), a list model
(ErrorList, MetroErrorList, PriceErrorList: the value is an array of Error / MetroError /
PriceError), or one of the token-API schemas in accesstokenv1-schemas.json (Oauth2TokenRequest,
Oauth2TokenResponse, Oauth2TokenErrorResponse). Prints one JSON object on stdout:

    {"results": [{"label": str, "model": str, "problems": [str, ...]}, ...]}

in input order, where each problem reads "<json-pointer>: <what>" (the root is the empty pointer)
and an empty list means valid. Exits 0 whatever the verdicts; the caller decides which problems
are acceptable. Exits 2, with a message on stderr, when the input cannot be read or is malformed
(including an unknown model name).

Beyond what Model.from_dict enforces, every field the model lacks is a problem: the SDK accepts
unknown keys silently (it parks them in `additional_properties` at every level). The SDK quirks
worked around are marked "Quirk" below and listed in README.md.
"""

import json
import sys
import typing
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOKEN_SCHEMAS = HERE / "accesstokenv1-schemas.json"
LIST_MODELS = {"ErrorList": "Error", "MetroErrorList": "MetroError", "PriceErrorList": "PriceError"}

F = None  # equinix.services.fabricv4, imported lazily (about 5 s)
BaseModel = None


# ---------------------------------------------------------------------------------------------
# JSON pointers and messages


def pointer(parts):
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def short(value, limit=80):
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def one_line(text, limit=600):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def error_text(err):
    """A pydantic error's message, with long enum lists cut short."""
    expected = (err.get("ctx") or {}).get("expected", "")
    if err.get("type") == "enum" and len(expected) > 120:
        count = expected.count("'") // 2
        return f"Input should be one of {count} values ({expected[:100]}...)"
    return one_line(err["msg"])


# ---------------------------------------------------------------------------------------------
# Locating SDK errors. The generated from_dict builds each nested model with a nested from_dict
# call, so a pydantic error only knows its place inside the innermost model. Every from_dict is
# wrapped to record, on the way out, the input it was given; the chain of inputs is then found
# again inside the checked value (by identity, else by equality).


def find(node, target, by_identity):
    """Path (list of keys) from node to a sub-value that is (or equals) target, or None."""
    if (node is target) if by_identity else (type(node) is type(target) and node == target):
        return []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in items:
        sub = find(child, target, by_identity)
        if sub is not None:
            return [key] + sub
    return None


def locate(value, trail):
    """Resolves a trail (outermost input first) inside value: (path, node, complete)."""
    path, node = [], value
    for obj in trail:
        sub = find(node, obj, True)
        if sub is None:
            sub = find(node, obj, False)
        if sub is None:
            return path, node, False
        path += sub
        node = _walk(node, sub)
    return path, node, True


def _walk(node, keys):
    for k in keys:
        node = node[k]
    return node


def describe(exc, value, base):
    """Problems for an exception raised while building a model from value (found at base)."""
    trail = [obj for _cls, obj in reversed(getattr(exc, "_contract_trail", []))]
    path, node, complete = locate(value, trail)
    where = base + path
    model = getattr(exc, "_contract_trail", [(None, None)])[0][0]
    model_name = model.__name__ if model else "?"
    if isinstance(exc, NotAnArray) and complete:
        return [f"{pointer(where + [exc.key])}: {exc} ({model_name})"]
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return [f"{pointer(where)}: {one_line(exc)} ({model_name})"]
    out = []
    for err in exc.errors():
        loc = [p for p in err.get("loc", ()) if isinstance(p, (str, int))]
        if not complete:
            out.append(f"{pointer(where)}: {model_name}{pointer(loc)}: {error_text(err)}, got {short(err.get('input'))}")
            continue
        # from_dict passes obj.get(key), so an absent key reaches pydantic as None.
        if err.get("input") is None and loc and isinstance(node, dict) and loc[0] not in node:
            what = "missing required field"
        elif err.get("input") is None:
            what = f"{error_text(err)}, got null"
        else:
            what = f"{error_text(err)}, got {short(err.get('input'))}"
        out.append(f"{pointer(where + loc)}: {what} ({model_name})")
    return out


# ---------------------------------------------------------------------------------------------
# Setting up the SDK


def load_sdk():
    global F, BaseModel
    if F is not None:
        return
    import pydantic
    import equinix.services.fabricv4 as fabricv4

    F, BaseModel = fabricv4, pydantic.BaseModel
    for cls in vars(F).values():
        if isinstance(cls, type) and issubclass(cls, BaseModel) and "from_dict" in vars(cls):
            _track(cls)

    # Quirk: ServiceProfileAccessPointType is oneOf COLO | VD, but both variants take the same
    # `type` enum (VD, COLO), so every value matches both and the SDK fails it with "Multiple
    # matches found". Choose the variant by `type` (the spec has no discriminator).
    def access_point_type(_cls, obj):
        kind = obj.get("type") if isinstance(obj, dict) else None
        return F.ServiceProfileAccessPointTypeVD if kind == "VD" else F.ServiceProfileAccessPointTypeCOLO

    _dispatch(F.ServiceProfileAccessPointType, access_point_type)

    # Quirk: ServiceProfileFilter is anyOf Simple | And and tries Simple first, which accepts
    # {"and": [...]} with `and` as an unknown field. An object with `and` is an And filter.
    def service_profile_filter(_cls, obj):
        if isinstance(obj, dict) and "and" in obj:
            return F.ServiceProfileAndFilter
        return F.ServiceProfileSimpleExpression

    _dispatch(F.ServiceProfileFilter, service_profile_filter)

    # Quirk: the Cloud Router searches' filter items are anyOf Simple | Or and try Simple first,
    # which accepts {"or": [...]} with `or` as an unknown field (so the Or filter's limit of
    # three is never checked). An object with `or` is an Or filter.
    for union, simple, either in [
        ("CloudRouterFilter", "CloudRouterSimpleExpression", "CloudRouterOrFilter"),
        ("RouteTableEntryFilter", "RouteTableEntrySimpleExpression", "RouteTableEntryOrFilter"),
        ("ConnectionRouteEntryFilter", "ConnectionRouteEntrySimpleExpression", "ConnectionRouteEntryOrFilter"),
    ]:
        def choose(_cls, obj, simple=getattr(F, simple), either=getattr(F, either)):
            return either if isinstance(obj, dict) and "or" in obj else simple

        _dispatch(getattr(F, union), choose)


class NotAnArray(ValueError):
    """A list field given something else. The generated from_dict iterates whatever it gets, so
    a string or an object in place of an array of models may pass (an empty one always does)."""

    def __init__(self, key, value):
        super().__init__(f"expected an array, got {short(value)}")
        self.key = key


def _list_fields(cls):
    return [info.alias or name for name, info in cls.model_fields.items()
            if typing.get_origin(info.annotation) is list
            or any(typing.get_origin(a) is list for a in typing.get_args(info.annotation))]


def _track(cls):
    original = vars(cls)["from_dict"].__func__
    lists = _list_fields(cls)

    def from_dict(klass, obj):
        try:
            if isinstance(obj, dict):
                for key in lists:
                    if obj.get(key) is not None and not isinstance(obj[key], list):
                        raise NotAnArray(key, obj[key])
            return original(klass, obj)
        except Exception as exc:
            trail = getattr(exc, "_contract_trail", None)
            if trail is None:
                trail = []
                try:
                    exc._contract_trail = trail
                except AttributeError:
                    pass
            trail.append((klass, obj))
            raise

    cls.from_dict = classmethod(from_dict)


def _dispatch(union_cls, choose):
    def from_dict(klass, obj):
        instance = klass.model_construct()
        instance.actual_instance = choose(klass, obj).from_dict(obj)
        return instance

    union_cls.from_dict = classmethod(from_dict)
    union_cls.from_json = classmethod(lambda klass, text: klass.from_dict(json.loads(text)))
    _track(union_cls)


# ---------------------------------------------------------------------------------------------
# Checking against an SDK model


def build(cls, value, base):
    """(instance or None, problems)."""
    try:
        instance = cls.from_dict(value)
    except Exception as exc:
        return None, describe(exc, value, base)
    if instance is None:
        return None, [f"{pointer(base)}: null is not a {cls.__name__}"]
    return instance, []


def field_type(annotation):
    """The model class (or ('list', class)) a field holds, through Optional; else None."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Union:
        rest = [a for a in args if a is not type(None)]
        return field_type(rest[0]) if len(rest) == 1 else None
    if origin is list and args:
        inner = field_type(args[0])
        return ("list", inner) if isinstance(inner, type) else None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel) and hasattr(annotation, "from_dict"):
        return annotation
    return None


def check_parked(model, name, alias, raw, path):
    """Quirk: models built with allOf (CloudRouter, ServiceProfile, ...) leave their own
    properties out of the list from_dict reads, so it parks e.g. router.uuid in
    additional_properties without validating it. Validate it as the field's declared type."""
    kind = field_type(type(model).model_fields[name].annotation)
    here = path + [alias]
    value = raw
    if raw is not None and isinstance(kind, type):
        value, problems = build(kind, raw, here)
        if problems:
            return problems
    elif raw is not None and isinstance(kind, tuple):
        if not isinstance(raw, list):
            return [f"{pointer(here)}: expected an array, got {short(raw)}"]
        value = []
        for i, item in enumerate(raw):
            inst, problems = build(kind[1], item, here + [i])
            if problems:
                return problems
            value.append(inst)
    try:
        setattr(model, name, value)  # the models validate on assignment
    except Exception as exc:
        errors = getattr(exc, "errors", None)
        if not callable(errors):
            return [f"{pointer(here)}: {one_line(exc)}"]
        return [
            f"{pointer(here + [p for p in e.get('loc', ())[1:] if isinstance(p, (str, int))])}: "
            f"{error_text(e)}, got {short(e.get('input'))} ({type(model).__name__})"
            for e in exc.errors()
        ]
    return []


def walk(m, path):
    """Problems left after from_dict: unknown fields, and the parked fields of allOf models."""
    out = []
    if isinstance(m, BaseModel):
        fields = type(m).model_fields
        parked = getattr(m, "additional_properties", None) or {}
        by_alias = {(info.alias or name): name for name, info in fields.items() if name != "additional_properties"}
        for key, raw in parked.items():
            if key in by_alias:
                out += check_parked(m, by_alias[key], key, raw, path)
            else:
                out.append(f"{pointer(path + [key])}: unknown field")
        if "actual_instance" in fields:
            return out + walk(m.actual_instance, path)
        for name, info in fields.items():
            if name != "additional_properties":
                out += walk(getattr(m, name), path + [info.alias or name])
    elif isinstance(m, list):
        for i, x in enumerate(m):
            out += walk(x, path + [i])
    elif isinstance(m, dict):
        for k, x in m.items():
            out += walk(x, path + [k])
    return out


def check_sdk(cls, value, base=()):
    instance, problems = build(cls, value, list(base))
    return problems if instance is None else walk(instance, list(base))


# ---------------------------------------------------------------------------------------------
# Checking against the token API's schemas (the SDK has no models for it)

_token_schemas = None


def token_schemas():
    global _token_schemas
    if _token_schemas is None:
        _token_schemas = json.loads(TOKEN_SCHEMAS.read_text())["schemas"]
    return _token_schemas


def unknown_keys(schema, value, path):
    out = []
    if isinstance(value, dict) and "properties" in schema:
        for key, x in value.items():
            if key in schema["properties"]:
                out += unknown_keys(schema["properties"][key], x, path + [key])
            else:
                out.append(f"{pointer(path + [key])}: unknown field")
    return out


def check_schema(name, value):
    import jsonschema

    schema = token_schemas()[name]
    # OpenAPI 3.0 schema objects are (an extension of) JSON Schema draft 4/5.
    validator = jsonschema.Draft4Validator(schema)
    out = []
    for err in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path)):
        out.append(f"{pointer(list(err.absolute_path))}: {one_line(err.message)} ({name})")
    return out + unknown_keys(schema, value, [])


# ---------------------------------------------------------------------------------------------


def known_model(name):
    if name in LIST_MODELS or name in token_schemas():
        return True
    load_sdk()
    cls = getattr(F, name, None)
    return isinstance(cls, type) and issubclass(cls, BaseModel) and hasattr(cls, "from_dict")


def check(model, value):
    if model in token_schemas():
        return check_schema(model, value)
    load_sdk()
    if model in LIST_MODELS:
        if not isinstance(value, list):
            return [f": {model} is an array, got {short(value)}"]
        item = getattr(F, LIST_MODELS[model])
        return [p for i, x in enumerate(value) for p in check_sdk(item, x, [i])]
    return check_sdk(getattr(F, model), value)


def read_cases(path):
    with open(path, encoding="utf-8") as f:
        cases = json.load(f)
    if not isinstance(cases, list):
        raise ValueError("the input must be a JSON array of cases")
    for i, case in enumerate(cases):
        if not (isinstance(case, dict) and isinstance(case.get("label"), str)
                and isinstance(case.get("model"), str) and "value" in case):
            raise ValueError(f"case {i} is not {{\"label\": str, \"model\": str, \"value\": any}}")
        if not known_model(case["model"]):
            raise ValueError(f"case {i} ({case['label']}): unknown model {case['model']!r}")
    return cases


def run(cases):
    return {"results": [{"label": c["label"], "model": c["model"], "problems": check(c["model"], c["value"])}
                        for c in cases]}


# ---------------------------------------------------------------------------------------------
# Self-test: (label, model, value, None when valid else substrings each some problem must contain)

_METRO = {
    "href": "https://api.equinix.com/fabric/v4/metros/AM", "type": "XF_METRO", "code": "AM",
    "region": "EMEA", "name": "Amsterdam", "equinixAsn": 60000, "localVCBandwidthMax": 50000,
    "geoCoordinates": {"latitude": 52.30049, "longitude": 4.942603},
    "connectedMetros": [{"href": "https://api.equinix.com/fabric/v4/metros/LD", "code": "LD",
                         "avgLatency": 5.85, "remoteVCBandwidthMax": 10000}],
    "services": [{"type": "ETHERNET_IP_SERVICE"}], "geoScopes": ["EU"],
}
_CONNECTION = {
    "type": "EVPL_VC", "name": "port-2-port", "bandwidth": 1000,
    "aSide": {"accessPoint": {"type": "COLO", "port": {"uuid": "a8ba52de-faae-43b5-b0b1-6904d37ee063"},
                              "linkProtocol": {"type": "DOT1Q", "vlanTag": 1001}}},
    "zSide": {"accessPoint": {"type": "CLOUD_ROUTER", "router": {"uuid": "a00cef6f-8e35-4794-9ff9-665e084e4e6d"}}},
    "notifications": [{"type": "ALL", "emails": ["test@equinix.com"]}],
}
_PROFILE = {
    "href": "https://api.equinix.com/fabric/v4/serviceProfiles/ea4b5141-e4d2-49f1-9768-4ea6e215b37f",
    "type": "L2_PROFILE", "name": "Service Profile 2", "uuid": "ea4b5141-e4d2-49f1-9768-4ea6e215b37f",
    "state": "ACTIVE", "visibility": "PUBLIC",
    "accessPointTypeConfigs": [{"type": "COLO", "uuid": "f20c49cd-b022-4aeb-b3e4-49db4389aff3",
                                "supportedBandwidths": [100, 500], "allowCustomBandwidth": True}],
    "metros": [{"code": "SY", "name": "Sydney", "ibxs": ["SY4"], "displayName": "Sydney"}],
}
_LINK_PROTOCOLS = {
    "pagination": {"offset": 0, "limit": 20, "total": 1},
    "data": [{"type": "DOT1Q", "uuid": "52d61263-fb0a-459d-a086-bc7fd6bd7384", "state": "RESERVED", "vlanTag": 200,
              "asset": {"uuid": "cd67f685-41b0-1b07-6de0-320a5c00abee", "bandwidth": 1000}}],
}


def _with(base, path, value):
    """A deep copy of base with value set at path (None as value deletes the key)."""
    copy = json.loads(json.dumps(base))
    node = _walk(copy, path[:-1])
    if value is None:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return copy


SELF_TEST = [
    ("valid Metro", "Metro", _METRO, None),
    ("Metro with string services", "Metro", _with(_METRO, ["services"], ["ETHERNET_IP_SERVICE"]), ["/services/0: "]),
    ("valid ConnectionPostRequest (router.uuid: allOf quirk)", "ConnectionPostRequest", _CONNECTION, None),
    ("ConnectionPostRequest with an unknown field", "ConnectionPostRequest", _with(_CONNECTION, ["color"], "red"),
     ["/color: unknown field"]),
    ("ConnectionPostRequest with a nested unknown field", "ConnectionPostRequest",
     _with(_CONNECTION, ["aSide", "accessPoint", "port", "portName"], "p"), ["/aSide/accessPoint/port/portName: unknown field"]),
    ("ConnectionPostRequest with a VLAN tag too high", "ConnectionPostRequest",
     _with(_CONNECTION, ["aSide", "accessPoint", "linkProtocol", "vlanTag"], 5000),
     ["/aSide/accessPoint/linkProtocol/vlanTag: "]),
    ("ConnectionPostRequest without bandwidth", "ConnectionPostRequest", _with(_CONNECTION, ["bandwidth"], None),
     ["/bandwidth: missing required field"]),
    ("ConnectionPostRequest with a bad router uuid (parked allOf field)", "ConnectionPostRequest",
     _with(_CONNECTION, ["zSide", "accessPoint", "router", "uuid"], 7), ["/zSide/accessPoint/router/uuid: "]),
    ("valid LinkProtocolGetResponse", "LinkProtocolGetResponse", _LINK_PROTOCOLS, None),
    ("LinkProtocolGetResponse with a connection field", "LinkProtocolGetResponse",
     _with(_LINK_PROTOCOLS, ["data", 0, "connection"], {"uuid": "cd67f685-41b0-1b07-6de0-320a5c00abee"}),
     ["/data/0/connection: unknown field"]),
    ("valid ServiceProfile (accessPointTypeConfigs quirk)", "ServiceProfile", _PROFILE, None),
    ("ServiceProfiles with a bad access point type", "ServiceProfiles",
     {"data": [_with(_PROFILE, ["accessPointTypeConfigs", 0, "type"], "PORT")]},
     ["/data/0/accessPointTypeConfigs/0/type: "]),
    ("valid ServiceProfileSearchRequest with and (filter quirk)", "ServiceProfileSearchRequest",
     {"filter": {"and": [{"property": "/state", "operator": "=", "values": ["ACTIVE"]}]},
      "pagination": {"offset": 0, "limit": 20}}, None),
    ("ServiceProfileSearchRequest with or", "ServiceProfileSearchRequest",
     {"filter": {"or": [{"property": "/state", "operator": "=", "values": ["ACTIVE"]}]}}, ["/filter/or: unknown field"]),
    ("valid CloudRouterSearchRequest with or (filter quirk)", "CloudRouterSearchRequest",
     {"filter": {"and": [{"property": "/project/projectId", "operator": "=", "values": ["p"]},
                         {"or": [{"property": "/name", "operator": "LIKE", "values": ["DC"]},
                                 {"property": "/state", "operator": "=", "values": ["PROVISIONED"]}]}]}}, None),
    ("CloudRouterSearchRequest with a numeric value in an or", "CloudRouterSearchRequest",
     {"filter": {"and": [{"or": [{"property": "/connectionsCount", "operator": "=", "values": [2]}]}]}},
     ["/filter/and/0/or/0/values/0: "]),
    ("valid ErrorList", "ErrorList", [{"errorCode": "EQ-3035202", "errorMessage": "Unable to fetch port details"}], None),
    ("ErrorList with a six-digit code", "ErrorList", [{"errorCode": "EQ-300005", "errorMessage": "x"}],
     ["/0/errorCode: "]),
    ("valid Oauth2TokenResponse", "Oauth2TokenResponse",
     {"access_token": "t", "token_timeout": "3599", "user_name": "u", "token_type": "Bearer"}, None),
    ("Oauth2TokenResponse with an int timeout and no type", "Oauth2TokenResponse",
     {"access_token": "t", "token_timeout": 3599, "user_name": "u"}, ["/token_timeout: ", ": 'token_type' is a required"]),
]


def self_test():
    cases = [{"label": label, "model": model, "value": value} for label, model, value, _ in SELF_TEST]
    results = run(cases)["results"]
    wrong = 0
    for (label, _model, _value, expect), result in zip(SELF_TEST, results):
        problems = result["problems"]
        if expect is None:
            ok = not problems
        else:
            ok = bool(problems) and all(any(s in p for p in problems) for s in expect)
        wrong += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {label}: {'valid' if not problems else '; '.join(problems)}")
    print(f"self-test: {len(SELF_TEST) - wrong} of {len(SELF_TEST)} verdicts right")
    return 1 if wrong else 0


def enums(names):
    """The SDK's values of each named enum (a class in equinix.services.fabricv4), or of an enum
    field written `Model.field`: what the project's own lists are compared with."""
    load_sdk()
    out = {}
    for name in names:
        model, _, field = name.partition(".")
        cls = getattr(F, model, None)
        if cls is None:
            raise ValueError(f"no model {model}")
        if field:
            info = cls.model_fields.get(field) or next(
                (i for i in cls.model_fields.values() if i.alias == field), None)
            if info is None:
                raise ValueError(f"{model} has no field {field}")
            ann = info.annotation
            args = [a for a in getattr(ann, "__args__", (ann,)) if a is not type(None)]
            cls = args[0]
        out[name] = [m.value for m in cls]
    return out


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) == 3 and argv[1] == "--enums":
        try:
            json.dump(enums(argv[2].split(",")), sys.stdout)
        except (ValueError, TypeError) as exc:
            print(f"check.py: {exc}", file=sys.stderr)
            return 2
        sys.stdout.write("\n")
        return 0
    if len(argv) != 2:
        print("usage: check.py CASES.json | --self-test | --enums NAME,...", file=sys.stderr)
        return 2
    try:
        cases = read_cases(argv[1])
    except (OSError, ValueError) as exc:
        print(f"check.py: cannot read {argv[1]}: {exc}", file=sys.stderr)
        return 2
    json.dump(run(cases), sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

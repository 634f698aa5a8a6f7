#!/usr/bin/env python3
"""A schema-driven fuzzer of our ACP checkout against the released OpenAPI (issue 44 item 5).

The spec is never copied into this repository: read it from a checkout of
agentic-commerce-protocol/agentic-commerce-protocol (docs/acp.md says which commit), e.g.

    git -C $ACP show c2afc863b46b6bb64fbc2be969bff25ee6eab652:spec/2026-04-17/openapi/openapi.agentic_checkout.yaml \\
        > /tmp/openapi.agentic_checkout.yaml
    python3 scripts/acp-fuzz.py /tmp/openapi.agentic_checkout.yaml http://127.0.0.1:8787 KEY [--cases 300] [--seed 1]

against a server started with `--acp-platforms` naming a platform whose api_key is KEY.

Each case is a *positive* request: a body generated at random from the operation's request
schema (every required property, each optional one half the time, enums, formats, bounds,
oneOf/anyOf picked, allOf merged), so the spec says it is well-formed. Half of the cases name
real gifts (taken from the server's own `/gifts/` ids, given with --gift) so they can get far.
A case is sent through the whole session: create, update, get, complete or cancel. Every answer
must be one the spec documents for that operation, its body valid against the documented
schema (the session, the session with its order, or the Error); a well-formed request must
never be refused as malformed (an answer naming an unknown field or a type it should have
accepted) and never answer 5xx. Prints a table per operation and each failure with its request;
exits 1 if any.
"""
import argparse
import collections
import copy
import json
import random
import string
import sys
import urllib.error
import urllib.request

import yaml
from jsonschema import Draft202012Validator

VERSION = "2026-04-17"


class Spec:
    def __init__(self, path):
        self.doc = yaml.safe_load(open(path))
        self.schemas = self.doc["components"]["schemas"]

    def resolve(self, schema):
        while "$ref" in schema:
            name = schema["$ref"].split("/")[-1]
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            schema = dict(self.schemas[name], **rest)
        return schema

    def validator(self, name):
        schema = {"$ref": f"#/components/schemas/{name}", "components": self.doc["components"]}
        return Draft202012Validator(schema)


class Generator:
    def __init__(self, spec, rng, gifts):
        self.spec, self.rng, self.gifts = spec, rng, gifts

    def value(self, schema, depth=0, name=""):
        schema = self.spec.resolve(schema)
        if "allOf" in schema:
            merged = {k: v for k, v in schema.items() if k != "allOf"}
            for part in schema["allOf"]:
                merged = self.merge(merged, part)
            return self.value(merged, depth, name)
        for key in ("oneOf", "anyOf"):
            if key in schema:
                # A branch may be a whole schema or only constraints on the parent's (a
                # `required` list): either way, the parent with the branch merged in.
                parent = {k: v for k, v in schema.items() if k != key}
                return self.value(self.merge(parent, self.rng.choice(schema[key])), depth + 1, name)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self.rng.choice(schema["enum"])
        kind = schema.get("type", "object" if "properties" in schema else "string")
        if isinstance(kind, list):
            kind = self.rng.choice([k for k in kind if k != "null"] or ["null"])
        if kind == "object":
            out = {}
            required = set(schema.get("required", []))
            for prop, inner in schema.get("properties", {}).items():
                deep = depth > 4
                if prop in required or (not deep and self.rng.random() < 0.5):
                    out[prop] = self.value(inner, depth + 1, prop)
            return out
        if kind == "array":
            low = schema.get("minItems", 0)
            high = min(schema.get("maxItems", low + 2), low + 2)
            return [self.value(schema.get("items", {}), depth + 1, name) for _ in range(self.rng.randint(low, high))]
        if kind == "integer":
            low = schema.get("minimum", 0)
            high = schema.get("maximum", low + 20)
            return self.rng.randint(int(low), int(high))
        if kind == "number":
            return round(self.rng.uniform(schema.get("minimum", 0), schema.get("maximum", 100)), 2)
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "null":
            return None
        return self.string(schema, name)

    def merge(self, base, part):
        """`base` with the schema `part` (resolved) laid over it: properties and required joined."""
        merged = dict(base)
        for key, inner in self.spec.resolve(part).items():
            if key == "properties":
                merged["properties"] = dict(merged.get("properties", {}), **inner)
            elif key == "required":
                merged["required"] = sorted(set(merged.get("required", [])) | set(inner))
            else:
                merged.setdefault(key, inner)
        return merged

    def string(self, schema, name):
        fmt = schema.get("format")
        if fmt == "email":
            return "buyer@example.com"
        if fmt in ("uri", "url"):
            return "https://agent.example/x"
        if fmt == "date-time":
            return "2026-12-24T10:00:00Z"
        if fmt == "date":
            return "2026-12-24"
        if "example" in schema and isinstance(schema["example"], str):
            return schema["example"]
        if name == "country":
            return self.rng.choice(["US", "PT", "DE", "GB"])
        if name == "currency":
            return self.rng.choice(["usd", "eur", "chf"])
        low = schema.get("minLength", 1)
        high = max(low, min(schema.get("maxLength", 12), 24))
        return "".join(self.rng.choice(string.ascii_letters + string.digits) for _ in range(self.rng.randint(low, high)))

    def realistic(self, body):
        """Half the time, the items are real gifts and the currency one we sell in."""
        if self.gifts and self.rng.random() < 0.5:
            for item in body.get("line_items", []) or []:
                item["id"] = self.rng.choice(self.gifts)
                if "quantity" in item:
                    item["quantity"] = self.rng.randint(1, 2)
            if "currency" in body:
                body["currency"] = "usd"
        return body


def send(base, key, method, path, body, idem):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{base}/acp{path}", data=data, method=method)
    request.add_header("Authorization", f"Bearer {key}")
    request.add_header("API-Version", VERSION)
    if body is not None:
        request.add_header("Content-Type", "application/json")
        request.add_header("Idempotency-Key", idem)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


MALFORMED_WORDS = ("unknown field", "unknown variant", "invalid type", "missing field", "expected ", "did not match")


def judge(spec, operation, status, raw, documented):
    """The failures in one answer: undocumented status, body not valid, a malformed refusal, 5xx."""
    try:
        body = json.loads(raw)
    except ValueError:
        return [f"{status}: not JSON: {raw[:200]!r}"]
    if status >= 500:
        return [f"{status}: a server error: {raw[:300]!r}"]
    name = documented.get(str(status)) or documented.get(f"{str(status)[0]}XX")
    if name is None:
        return [f"{status}: not documented for {operation}"]
    if operation == "complete" and status == 200 and "order" not in body:
        # docs/acp.md §5: when the buyer must act (a decline, stock gone, a term we do not
        # offer) complete answers the session, not completed, with an error message saying why.
        name = "CheckoutSession"
        acted = body.get("status") != "completed" and any(m.get("type") == "error" for m in body.get("messages", []))
        if not acted:
            return ["200: a session without an order that does not say why"]
    errors = list(spec.validator(name).iter_errors(body))
    problems = [f"{status}: not a valid {name}: {errors[0].message[:200]} at {list(errors[0].absolute_path)}"] if errors else []
    if status == 400 and name == "Error":
        message = str(body.get("message", "")).lower()
        if any(word in message for word in MALFORMED_WORDS):
            problems.append(f"400: a well-formed request refused as malformed: {body}")
    return problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("openapi")
    parser.add_argument("base")
    parser.add_argument("key")
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--gift", action="append", default=["hh-010", "hh-001", "pp-005", "lw-010", "tr-001"])
    args = parser.parse_args()
    spec = Spec(args.openapi)
    rng = random.Random(args.seed)
    gen = Generator(spec, rng, args.gift)
    create = spec.schemas["CheckoutSessionCreateRequest"]
    update = spec.schemas["CheckoutSessionUpdateRequest"]
    complete = spec.schemas["CheckoutSessionCompleteRequest"]
    session_docs = {"201": "CheckoutSession", "200": "CheckoutSession", "4XX": "Error"}
    order_docs = {"200": "CheckoutSessionWithOrder", "4XX": "Error"}
    get_docs = {"200": "CheckoutSession", "404": "Error", "4XX": "Error"}
    table = collections.defaultdict(collections.Counter)
    failures = []
    refusals = collections.Counter()

    steps = iter(range(1 << 62))

    def step(operation, method, path, schema, docs, n):
        body = None if schema is None else gen.realistic(gen.value(schema, name="body"))
        # A key of its own per request: the fuzzer is not testing idempotency (the tests are).
        status, raw = send(args.base, args.key, method, path, body, f"fuzz-{args.seed}-{n}-{next(steps)}")
        table[operation][status] += 1
        if status >= 400:
            try:
                error = json.loads(raw)
                refusals[(operation, status, error.get("code"), str(error.get("message"))[:90])] += 1
            except ValueError:
                pass
        for problem in judge(spec, operation, status, raw, docs):
            failures.append((operation, problem, copy.deepcopy(body)))
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, None

    for n in range(args.cases):
        status, session = step("create", "POST", "/checkout_sessions", create, session_docs, n)
        if status != 201 or not session:
            continue
        sid = session["id"]
        for _ in range(rng.randint(0, 2)):
            step("update", "POST", f"/checkout_sessions/{sid}", update, session_docs, n)
        step("get", "GET", f"/checkout_sessions/{sid}", None, get_docs, n)
        if rng.random() < 0.7:
            step("complete", "POST", f"/checkout_sessions/{sid}/complete", complete, order_docs, n)
        else:
            step("cancel", "POST", f"/checkout_sessions/{sid}/cancel", {"type": "object"}, session_docs, n)

    for operation, counts in table.items():
        print(f"{operation:9} " + ", ".join(f"{status}: {count}" for status, count in sorted(counts.items())))
    print("\nrefusals (operation, status, code, message): count")
    for refusal, count in refusals.most_common():
        print(f"  {refusal}: {count}")
    seen = set()
    for operation, problem, body in failures:
        key = (operation, problem[:80])
        if key in seen:
            continue
        seen.add(key)
        print(f"\nFAIL {operation}: {problem}\n  request: {json.dumps(body)[:800]}")
    print(f"\n{sum(sum(c.values()) for c in table.values())} requests, {len(failures)} failures ({len(seen)} distinct)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Validates an exported product feed against the ACP spec's own JSON Schema, out of tree.

The spec's schema is never copied into this repository: read it from a checkout of
agentic-commerce-protocol/agentic-commerce-protocol (docs/feed.md says which commit), e.g.

    git -C $ACP show c2afc863b46b6bb64fbc2be969bff25ee6eab652:spec/2026-04-17/json-schema/schema.feed.json \
        > /tmp/schema.feed.json
    python3 scripts/check-feed-against-spec.py /tmp/schema.feed.json DIR

Every line of DIR/products.jsonl must be a valid `Product`, DIR/metadata.json a valid
`FeedMetadata`, and a batch of the first 100 products a valid `UpsertProductsRequest` (what a
feed receiver's PATCH takes). Draft 2020-12 with formats checked. Prints the counts; exits 1 on
the first invalid object, naming it.

    python3 scripts/check-feed-against-spec.py --upserts /tmp/schema.feed.json BODIES

checks instead every body a feed receiver was sent: the `upsert-*.json` files the tests' feed
receiver writes into BODIES when GG_FEED_BODIES_DIR=BODIES is set (docs/feed.md), each a valid
`UpsertProductsRequest`.
"""
import glob
import json
import sys

from jsonschema import Draft202012Validator, FormatChecker


def validator(bundle, name):
    schema = {"$schema": bundle["$schema"], "$defs": bundle["$defs"], "$ref": f"#/$defs/{name}"}
    return Draft202012Validator(schema, format_checker=FormatChecker())


def urls(value):
    """Every `url` in `value`, wherever it is nested."""
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "url":
                yield inner
            yield from urls(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from urls(inner)


def check(what, schema, value):
    """Exits naming `what` if `value` is not valid against `schema` or holds a URL that is not absolute."""
    errors = list(schema.iter_errors(value))
    if errors:
        sys.exit(f"{what}: {errors[0].message} at {list(errors[0].absolute_path)}")
    # `format: uri` is checked only when an optional package is installed: by hand here.
    bad = [u for u in urls(value) if not u.startswith(("https://", "http://")) or " " in u]
    if bad:
        sys.exit(f"{what}: not an absolute URL: {bad[0]}")


def main(schema_path, folder):
    bundle = json.load(open(schema_path))
    product, metadata, upsert = (validator(bundle, n) for n in ("Product", "FeedMetadata", "UpsertProductsRequest"))
    count, first = 0, []
    with open(f"{folder}/products.jsonl") as lines:
        for number, line in enumerate(lines, 1):
            value = json.loads(line)
            check(f"line {number} ({value.get('id')})", product, value)
            count += 1
            if len(first) < 100:
                first.append(value)
    meta = json.load(open(f"{folder}/metadata.json"))
    for name, schema, value in (("metadata.json", metadata, meta), ("a PATCH batch", upsert, {"products": first})):
        errors = list(schema.iter_errors(value))
        if errors:
            sys.exit(f"{name}: {errors[0].message}")
    print(f"{count} products valid; metadata.json valid; a batch of {len(first)} valid as UpsertProductsRequest")


def upserts(schema_path, folder):
    bundle = json.load(open(schema_path))
    upsert = validator(bundle, "UpsertProductsRequest")
    bodies, products, gone = 0, 0, 0
    for path in sorted(glob.glob(f"{folder}/upsert-*.json")):
        value = json.load(open(path))
        check(path, upsert, value)
        bodies += 1
        products += len(value["products"])
        gone += sum(1 for p in value["products"] if p["variants"][0]["availability"]["status"] == "discontinued")
    if bodies == 0:
        sys.exit(f"no upsert-*.json in {folder}")
    print(f"{bodies} PATCH bodies valid as UpsertProductsRequest: {products} products, {gone} discontinued")


if __name__ == "__main__":
    if sys.argv[1] == "--upserts":
        upserts(*sys.argv[2:4])
    else:
        main(*sys.argv[1:3])

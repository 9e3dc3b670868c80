#!/usr/bin/env python3
"""Validate a HAR file against har-1.2.schema.json (next to this script).

Usage: python3 check_schema.py FILE.har
Exit status: 0 when the file conforms, 1 when it does not (or cannot be read), 2 on usage errors.
Each problem is printed as "PATH: MESSAGE" with PATH like log/entries/5/response/content.
Checks the schema only: rules a schema cannot express (time equal to the sum of the timings,
ssl inside connect, content.size against the text) are `harrec validate`'s job.
"""
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    print("check_schema.py: the python 'jsonschema' module is required", file=sys.stderr)
    sys.exit(2)

SCHEMA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "har-1.2.schema.json")


def main(argv):
    if len(argv) != 2:
        print("usage: python3 check_schema.py FILE.har", file=sys.stderr)
        return 2
    with open(SCHEMA_PATH, encoding="utf-8") as f:
        schema = json.load(f)
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema)
    try:
        # utf-8-sig: HAR 1.2 asks readers to ignore a BOM.
        with open(argv[1], encoding="utf-8-sig") as f:
            document = json.load(f)
    except (OSError, ValueError) as error:
        print(f"{argv[1]}: cannot read JSON: {error}")
        return 1
    errors = sorted(validator.iter_errors(document), key=lambda e: [str(p) for p in e.absolute_path])
    for error in errors:
        path = "/".join(str(p) for p in error.absolute_path) or "(root)"
        print(f"{path}: {error.message}")
    if errors:
        print(f"{argv[1]}: {len(errors)} schema violation(s)")
        return 1
    print(f"{argv[1]}: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

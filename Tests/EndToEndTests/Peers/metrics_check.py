#!/usr/bin/env python3
"""Scrapes a call's /metrics as Prometheus does and reads it with a real parser (run with the repo's venv python).

prometheus_client's text parser (the reference Python client's reader of the text exposition format 0.0.4)
reads the answer; a parse error is reported, never hidden. Then the lint rules of `promtool check metrics`
(Prometheus's promlint: util/promlint) are applied to the families: HELP present, counters named `_total`
and nothing else so named, snake_case names, base units only (no milli-, micro-, kilo- units, no percent),
no reserved suffix on a counter or gauge. One JSON object is printed on stdout:

  {"status": HTTP status with the token, "contentType": its Content-Type, "statusWithoutToken": HTTP status
   without it, "families": {NAME: {"type", "help", "samples": [[sample name, {labels}, value]]}},
   "lint": ["NAME: problem", ...], "error": parse error text or null}

Options:
  --url URL        the /metrics URL
  --token T        sent as Authorization: Bearer T (the scrape config's bearer token)
  --insecure       HTTPS without certificate checks (a --share call's self-signed certificate)
"""

import argparse
import json
import math
import re
import ssl
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

# promlint's unit check: these words in a name are not base units (prometheus util/promlint, lintUnitAbbreviations
# and lintNonBaseUnit).
NON_BASE_UNITS = ["milliseconds", "microseconds", "nanoseconds", "minutes", "hours", "days", "weeks", "kilobytes",
                  "megabytes", "gigabytes", "kilobits", "megabits", "kbps", "mbps", "percent", "celsius", "fahrenheit",
                  "kelvins", "grams", "meters", "millis", "ms", "us", "ns", "kb", "mb", "gb"]


def fetch(url, token, insecure):
    request = urllib.request.Request(url, headers={"Authorization": "Bearer " + token} if token else {})
    context = ssl._create_unverified_context() if insecure else None
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as response:
            return response.status, response.headers.get("Content-Type"), response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type"), error.read().decode("utf-8", "replace")


def lint(families, text):
    problems = []
    # prometheus_client adds _total to a counter's samples itself: the names as written are read from TYPE lines.
    for line in text.splitlines():
        words = line.split()
        if len(words) == 4 and words[:2] == ["#", "TYPE"]:
            if words[3] == "counter" and not words[2].endswith("_total"):
                problems.append(f"{words[2]}: counter not named _total")
            elif words[3] != "counter" and words[2].endswith("_total"):
                problems.append(f"{words[2]}: a {words[3]} named _total")
    for family in families:
        name, kind = family.name, family.type
        full = name + "_total" if kind == "counter" else name
        if not family.documentation:
            problems.append(f"{full}: no help text")
        if re.search(r"[A-Z]", full) or not re.fullmatch(r"[a-z_:][a-z0-9_:]*", full):
            problems.append(f"{full}: not snake_case")
        words = full.split("_")
        for unit in NON_BASE_UNITS:
            if unit in words:
                problems.append(f"{full}: uses '{unit}', not a base unit")
        if kind in ("counter", "gauge"):
            for suffix in ("_count", "_sum", "_bucket"):
                if name.endswith(suffix):
                    problems.append(f"{name}: a {kind} with the reserved suffix {suffix}")
        if kind == "summary":
            for sample in family.samples:
                if sample.name == name and "quantile" not in sample.labels:
                    problems.append(f"{name}: summary sample without quantile")
    return problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", default="")
    parser.add_argument("--insecure", action="store_true")
    args = parser.parse_args()
    status, content_type, text = fetch(args.url, args.token, args.insecure)
    report = {"status": status, "contentType": content_type, "families": {}, "lint": [], "error": None}
    if args.token:
        report["statusWithoutToken"] = fetch(args.url, "", args.insecure)[0]
    if status == 200:
        try:
            families = list(text_string_to_metric_families(text))
            for family in families:
                name = family.name + "_total" if family.type == "counter" else family.name
                if name in report["families"]:
                    raise ValueError(f"family {name} appears twice")
                report["families"][name] = {
                    "type": family.type, "help": family.documentation,
                    "samples": [[s.name, s.labels, None if math.isnan(s.value) else s.value] for s in family.samples],
                }
            report["lint"] = lint(families, text)
        except Exception as error:  # the parser's ValueError, or ours: reported to the test
            report["error"] = f"{type(error).__name__}: {error}"
    print(json.dumps(report))


if __name__ == "__main__":
    main()

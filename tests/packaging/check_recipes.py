#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the package recipes under packaging/ against porta's CMake, offline and without their tools.

    python3 tests/packaging/check_recipes.py <source dir> [-v]
    python3 tests/packaging/check_recipes.py <source dir> --rename FILE OLD NEW --expect-fail TEXT

Each recipe is run, not read: the Spack package's cmake_args() is executed against a stand-in of
the Spack API (below), the vcpkg portfile by `cmake -P` against stand-ins of the vcpkg helpers
(vcpkg_stub.cmake beside this file), and the conda build script by bash with a stand-in `cmake`
first on PATH that records its arguments. Each is rendered with every variant (feature, variant
value) off and then with each one on, so the check sees which CMake options each variant drives.

What must hold, with the facts taken from the source tree, never from a list written here:
  - every -DPORTA_* a recipe passes is an option or cache variable that porta's CMake declares
    (option() or set(... CACHE ...) in CMakeLists.txt, cmake/, backends/, python/, tools/; the
    switches PORTA_ENABLE_<option> expanded from include/porta/abi/device_types.inc);
  - a backend switch (PORTA_ENABLE_*) is given ON or OFF, never another value;
  - each GPU backend of device_types.inc and MPI (every PORTA_ENABLE_* switch except the CPU's) is
    driven by a variant of every recipe: OFF without it, ON with it;
  - the version of every recipe is project(porta VERSION ...) of CMakeLists.txt, the license is
    Apache-2.0, and a recipe that builds from the checkout points at it.
Exit status 0 when all hold; 1 with one line per problem otherwise. --rename checks a copy of the
recipes with one spelling changed and --expect-fail TEXT succeeds only when a problem naming TEXT is
found: the ctest entries that prove a broken recipe is caught. Needs python3 with PyYAML, cmake, bash.
"""
import argparse
import ast
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import types

try:
    import yaml
except ImportError:
    sys.exit("check_recipes: %s has no PyYAML (apt-get install python3-yaml)" % sys.executable)

LICENSE = "Apache-2.0"
HERE = os.path.dirname(os.path.abspath(__file__))
CMAKE = [shutil.which("cmake") or "cmake"]  # --cmake replaces it (ctest passes its own)


# ---- what porta's CMake declares ------------------------------------------------------------------
class CMakeFacts:
    def __init__(self, src):
        self.src = src
        text = read(os.path.join(src, "CMakeLists.txt"))
        m = re.search(r"project\(\s*porta\s+VERSION\s+([0-9.]+)", text)
        if not m:
            raise SystemExit("check_recipes: no project(porta VERSION ...) in %s/CMakeLists.txt" % src)
        self.version = m.group(1)
        self.device_types = self._device_types()
        self.options = self._options()
        # The backend switches: every PORTA_ENABLE_* that CMake declares. The CPU's (OPENMP) has a
        # fallback (serial) and is not a backend a package must offer as a variant.
        cpu_option = [opt for name, opt in self.device_types if name == "cpu"]
        self.switches = sorted(o for o in self.options if o.startswith("PORTA_ENABLE_"))
        self.required = [o for o in self.switches if o not in ("PORTA_ENABLE_" + c for c in cpu_option)]

    def _device_types(self):
        path = os.path.join(self.src, "include", "porta", "abi", "device_types.inc")
        rows = re.findall(r'^PORTA_DEVICE_TYPE\(([a-z0-9_]+),[^\n]*?"([A-Z0-9_]+)", *"[^"]*"\)', read(path), re.M)
        if not rows:
            raise SystemExit("check_recipes: no PORTA_DEVICE_TYPE lines in %s" % path)
        return rows

    def _files(self):
        pats = ["CMakeLists.txt", "cmake/*.cmake", "backends/*/backend.cmake", "backends/*/CMakeLists.txt",
                "python/CMakeLists.txt", "tools/CMakeLists.txt", "runtime/CMakeLists.txt",
                "algorithms/CMakeLists.txt", "distributed/CMakeLists.txt"]
        for pat in pats:
            for path in sorted(glob.glob(os.path.join(self.src, pat))):
                yield path

    def _options(self):
        # Lists a foreach() walks to make option names: list(APPEND <list> <literal>...) and, for the
        # list that PortaOptions.cmake fills from device_types.inc, the inc's option column.
        lists = {}
        loop_var = {}
        found = set()
        for path in self._files():
            text = strip_comments(read(path))
            for name, items in re.findall(r"list\(\s*APPEND\s+(\w+)\s+([^)]*)\)", text):
                for item in items.split():
                    if re.fullmatch(r"[A-Z0-9_]+", item):
                        lists.setdefault(name, []).append(item)
                    elif "CMAKE_MATCH" in item:  # filled from device_types.inc's option column
                        lists.setdefault(name, []).extend(opt for _, opt in self.device_types)
            for var, lst in re.findall(r"foreach\(\s*(\w+)\s+IN\s+LISTS\s+(\w+)\s*\)", text):
                loop_var[var] = lst
            for name in re.findall(r"\boption\(\s*([A-Za-z0-9_${}]+)", text):
                found.add(name)
            for name, kind in re.findall(r"\bset\(\s*([A-Za-z0-9_${}]+)\s[^)]*?\bCACHE\s+(\w+)", text, re.S):
                if kind != "INTERNAL":
                    found.add(name)
        options = set()
        for name in found:
            m = re.search(r"\$\{(\w+)\}", name)
            if not m:
                options.add(name)
            elif m.group(1) in loop_var and loop_var[m.group(1)] in lists:
                for value in lists[loop_var[m.group(1)]]:
                    options.add(name.replace(m.group(0), value))
        return {o for o in options if o.startswith("PORTA_")}


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def strip_comments(cmake_text):
    return re.sub(r"#[^\n]*", "", cmake_text)


def same_folder(a, b):
    # Compared as written: in the failing tests' checkout, packaging/ may be a link into the real one.
    return os.path.normpath(a) == os.path.normpath(b) or os.path.realpath(a) == os.path.realpath(b)


def parse_defines(args):
    """-DNAME[:TYPE]=VALUE arguments -> {NAME: VALUE}; a later one wins, as on cmake's command line."""
    out = {}
    for arg in args:
        m = re.fullmatch(r"-D([A-Za-z0-9_]+)(?::[A-Z]+)?=(.*)", arg, re.S)
        if m:
            out[m.group(1)] = m.group(2)
    return out


# ---- the checks every recipe shares -------------------------------------------------------------
class Report:
    def __init__(self):
        self.problems = []
        self.notes = []

    def fail(self, recipe, text):
        self.problems.append("%s: %s" % (recipe, text))

    def note(self, recipe, text):
        self.notes.append("%s: %s" % (recipe, text))


def check_renders(report, facts, recipe, baseline, toggled):
    """baseline: the -D options with every variant off; toggled: {variant: options with it on}."""
    unknown, not_switch = {}, {}
    for label, defines in [("every variant off", baseline)] + sorted(toggled.items()):
        for name, value in sorted(defines.items()):
            if name.startswith("PORTA_") and name not in facts.options:
                unknown.setdefault(name, []).append(label)
            if name in facts.switches and value.upper() not in ("ON", "OFF"):
                not_switch.setdefault("%s=%s" % (name, value), []).append(label)
    for name, labels in sorted(unknown.items()):
        report.fail(recipe, "passes -D%s, which porta's CMake does not declare (%s)" % (name, ", ".join(labels)))
    for name, labels in sorted(not_switch.items()):
        report.fail(recipe, "passes -D%s: a package gives ON or OFF, not AUTO (%s)" % (name, ", ".join(labels)))
    for label, defines in sorted(toggled.items()):
        if defines == baseline:
            report.fail(recipe, "variant %s changes no CMake option" % label)
    for option in facts.required:
        drivers = [v for v, d in sorted(toggled.items())
                   if baseline.get(option, "").upper() == "OFF" and d.get(option, "").upper() == "ON"]
        if not drivers:
            report.fail(recipe, "no variant turns %s from OFF to ON (every variant off: %s)"
                        % (option, baseline.get(option, "not passed")))
        else:
            report.note(recipe, "%s <- %s" % (option, ", ".join(drivers)))


def check_version(report, facts, recipe, version):
    if version != facts.version:
        report.fail(recipe, "version %r differs from CMakeLists.txt's %s" % (version, facts.version))


def check_license(report, recipe, license_):
    if license_ != LICENSE:
        report.fail(recipe, "license %r is not %s" % (license_, LICENSE))


# ---- Spack: package.py executed against a stand-in of the Spack API -----------------------------
class _Value:
    def __init__(self, value):
        self.value = value


class _Spec:
    def __init__(self, variants):
        self.variants = {k: _Value(v) for k, v in variants.items()}

    def satisfies(self, constraint):
        constraint = constraint.strip()
        if constraint[:1] in "+~":
            value = self.variants[constraint[1:]].value
            return value is (constraint[0] == "+")
        if "=" in constraint:
            name, value = constraint.split("=", 1)
            current = self.variants[name].value
            return value in current if isinstance(current, tuple) else str(current) == value
        raise KeyError("the Spack stand-in does not evaluate %r" % constraint)

    def __contains__(self, constraint):
        return self.satisfies(constraint)

    def __getitem__(self, name):
        return types.SimpleNamespace(prefix="/spack/" + name,
                                     command=types.SimpleNamespace(path="/spack/%s/bin/%s" % (name, name)),
                                     package=types.SimpleNamespace(platlib="lib/python3/site-packages"))


def _spack_module():
    """A module that stands for spack.package: the directives record what the class declares."""
    decl = {"variants": {}, "versions": [], "licenses": [], "depends": []}
    mod = types.ModuleType("spack.package")

    def variant(name, default=None, description="", values=None, multi=False, **kw):
        decl["variants"][name] = {"default": default, "values": values, "multi": multi}

    def version(name, *args, **kw):
        decl["versions"].append((str(name), kw))

    def license(name, **kw):
        decl["licenses"].append(name)

    def depends_on(spec, **kw):
        decl["depends"].append(spec)

    def _ignore(*args, **kw):
        return None

    class PackageBase:
        run_tests = False

        def __init__(self, spec):
            self.spec = spec

        def define(self, name, value):
            if isinstance(value, bool):
                return "-D%s:BOOL=%s" % (name, "ON" if value else "OFF")
            if isinstance(value, (list, tuple)):
                return "-D%s:STRING=%s" % (name, ";".join(str(v) for v in value))
            return "-D%s:STRING=%s" % (name, value)

        def define_from_variant(self, name, variant=None):
            variant = variant or name.lower()
            if variant not in self.spec.variants:
                raise KeyError("define_from_variant(%r, %r): no such variant" % (name, variant))
            return self.define(name, self.spec.variants[variant].value)

    class CMakePackage(PackageBase):
        pass

    class CudaPackage(PackageBase):
        pass

    class ROCmPackage(PackageBase):
        pass

    # The mixins' variants, as Spack declares them (spack docs: CudaPackage, ROCmPackage).
    mixin_variants = {"CudaPackage": {"cuda": False, "cuda_arch": ("none",)},
                      "ROCmPackage": {"rocm": False, "amdgpu_target": ("none",)}}
    for name in ("variant", "version", "license", "depends_on"):
        setattr(mod, name, locals()[name])
    for name in ("conflicts", "requires", "provides", "patch", "resource", "maintainers", "generator",
                 "extends", "build_system", "on_package_attributes", "run_after", "run_before"):
        setattr(mod, name, _ignore)
    for cls in (PackageBase, CMakePackage, CudaPackage, ROCmPackage):
        setattr(mod, cls.__name__, cls)
    mod.__all__ = [n for n in vars(mod) if not n.startswith("_")]
    return mod, decl, mixin_variants


def check_spack(report, facts, path):
    recipe = os.path.relpath(path, facts.src)
    source = read(path)
    try:
        tree = ast.parse(source, path)
    except SyntaxError as e:
        report.fail(recipe, "syntax error: %s" % e)
        return
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    if len(classes) != 1 or classes[0].name != "Porta":
        report.fail(recipe, "expected one class Porta, found %s" % [c.name for c in classes])
        return
    bases = [b.id for b in classes[0].bases if isinstance(b, ast.Name)]
    for base in ("CMakePackage", "CudaPackage", "ROCmPackage"):
        if base not in bases:
            report.fail(recipe, "class Porta does not derive from %s" % base)
    mod, decl, mixin_variants = _spack_module()
    spack = types.ModuleType("spack")
    spack.package = mod
    saved = {k: sys.modules.get(k) for k in ("spack", "spack.package")}
    sys.modules.update({"spack": spack, "spack.package": mod})
    namespace = {"__name__": "spack_package_porta"}
    try:
        exec(compile(tree, path, "exec"), namespace)  # noqa: S102 - the recipe, with Spack stood in
    except Exception as e:  # noqa: BLE001 - a name the stand-in lacks is a name Spack lacks too
        report.fail(recipe, "cannot load the class: %s: %s" % (type(e).__name__, e))
        return
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    porta = namespace["Porta"]
    variants = {}
    for base in bases:
        variants.update(mixin_variants.get(base, {}))
    variants.update({k: v["default"] for k, v in decl["variants"].items()})
    bool_variants = sorted(k for k, v in variants.items() if isinstance(v, bool))
    # A multi-valued variant is given a real value alongside the switch it belongs to.
    sample = {"cuda_arch": ("80", "90"), "amdgpu_target": ("gfx90a", "gfx942")}

    def render(on):
        values = {k: (False if isinstance(v, bool) else v) for k, v in variants.items()}
        for name in on:
            values[name] = True
        if values.get("cuda"):
            values["cuda_arch"] = sample["cuda_arch"]
        if values.get("rocm"):
            values["amdgpu_target"] = sample["amdgpu_target"]
        return parse_defines(porta(_Spec(values)).cmake_args())

    try:
        baseline = render([])
        toggled = {v: render([v]) for v in bool_variants}
    except Exception as e:  # noqa: BLE001 - any failure of the recipe's own code is the finding
        report.fail(recipe, "cmake_args() failed: %s: %s" % (type(e).__name__, e))
        return
    check_renders(report, facts, recipe, baseline, toggled)
    if "PORTA_CUDA_ARCHITECTURES" not in toggled.get("cuda", {}):
        report.fail(recipe, "+cuda does not pass cuda_arch on as PORTA_CUDA_ARCHITECTURES")
    if "PORTA_HIP_ARCHITECTURES" not in toggled.get("rocm", {}):
        report.fail(recipe, "+rocm does not pass amdgpu_target on as PORTA_HIP_ARCHITECTURES")
    releases = [v for v, kw in decl["versions"] if not {"branch", "tag", "commit"} & set(kw)]
    if not releases:
        report.fail(recipe, "no release version()")
    for v in releases[:1]:
        check_version(report, facts, recipe, v)
    check_license(report, recipe, decl["licenses"][0] if decl["licenses"] else None)
    report.note(recipe, "variants %s; release %s" % (", ".join(sorted(variants)), ", ".join(releases)))


# ---- vcpkg: vcpkg.json read as JSON, portfile.cmake run by cmake -P against vcpkg_stub.cmake ------
def check_vcpkg(report, facts, folder):
    recipe = os.path.relpath(folder, facts.src)
    try:
        manifest = json.loads(read(os.path.join(folder, "vcpkg.json")))
    except ValueError as e:
        report.fail(recipe, "vcpkg.json is not JSON: %s" % e)
        return
    check_version(report, facts, recipe, manifest.get("version") or manifest.get("version-string"))
    check_license(report, recipe, manifest.get("license"))
    if manifest.get("name") != "porta":
        report.fail(recipe, "vcpkg.json's name is %r, not porta" % manifest.get("name"))
    features = sorted(manifest.get("features", {}))
    for name in manifest.get("default-features", []):
        if (name["name"] if isinstance(name, dict) else name) not in features:
            report.fail(recipe, "default feature %r is not among the features" % name)
    cmake = CMAKE[0]
    with tempfile.TemporaryDirectory(prefix="porta-vcpkg-") as tmp:
        def render(on):
            out = os.path.join(tmp, "record.txt")
            cmd = [cmake, "-DPORTFILE=" + os.path.join(folder, "portfile.cmake"),
                   "-DFEATURES=" + ";".join(["core"] + on), "-DOUT=" + out,
                   "-DCURRENT_PACKAGES_DIR=" + os.path.join(tmp, "packages"),
                   "-P", os.path.join(HERE, "vcpkg_stub.cmake")]
            run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
            if run.returncode != 0:
                raise RuntimeError("portfile.cmake with features %s failed:\n%s" % (on, run.stdout))
            record = {}
            for line in read(out).splitlines():
                what, _, value = line.partition("\t")
                record.setdefault(what, []).append(value)
            return record

        try:
            base = render([])
            toggled = {f: render([f]) for f in features}
        except RuntimeError as e:
            report.fail(recipe, str(e))
            return
    # The release configuration is the package: OPTIONS, then OPTIONS_RELEASE win.
    def options(record):
        return parse_defines(record.get("option", []) + record.get("option_release", []))

    check_renders(report, facts, recipe, options(base), {f: options(r) for f, r in toggled.items()})
    for name in parse_defines(base.get("option_debug", [])):
        if name.startswith("PORTA_") and name not in facts.options:
            report.fail(recipe, "OPTIONS_DEBUG passes -D%s, which porta's CMake does not declare" % name)
    for mapping in base.get("feature_var", []):
        feature = mapping.split("=", 1)[0]
        if feature not in features:
            report.fail(recipe, "portfile.cmake maps feature %r, which vcpkg.json does not declare" % feature)
    source = (base.get("source_path") or [""])[0]
    if not same_folder(source, facts.src):
        report.fail(recipe, "portfile.cmake builds %r, not the checkout %s" % (source, facts.src))
    report.note(recipe, "features %s" % ", ".join(features))


# ---- conda: recipe.yaml read by yaml.safe_load, build.sh run with a stand-in cmake ---------------
_JINJA = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def _evaluate(expr, variant):
    # The recipe's expressions are of the form `"ON" if key != "None" else "OFF"` and names of
    # variant keys: the same in Jinja and Python, so Python evaluates them, with no built-ins.
    names = dict(variant)
    names.update({"compiler": lambda lang: "%s_compiler" % lang, "stdlib": lambda lang: "%s_stdlib" % lang,
                  "hash": "h0", "build_number": 0, "linux": True, "unix": True, "osx": False, "win": False})
    return eval(expr.strip(), {"__builtins__": {}}, names)  # noqa: S307 - the recipe's own text


def _render(value, variant):
    """Every ${{ }} and `if:` of the recipe evaluated for one variant: unknown names fail here."""
    if isinstance(value, str):
        return _JINJA.sub(lambda m: str(_evaluate(m.group(1), variant)), value)
    if isinstance(value, list):
        out = []
        for item in value:
            if isinstance(item, dict) and "if" in item:
                chosen = item.get("then") if _evaluate(item["if"], variant) else item.get("else")
                chosen = [] if chosen is None else chosen
                out.extend(_render(chosen if isinstance(chosen, list) else [chosen], variant))
            else:
                out.append(_render(item, variant))
        return out
    if isinstance(value, dict):
        return {k: _render(v, variant) for k, v in value.items()}
    return value


def check_conda(report, facts, folder):
    recipe = os.path.relpath(folder, facts.src)
    try:
        doc = yaml.safe_load(read(os.path.join(folder, "recipe.yaml")))
        # variants.yaml first: its first value of each key is the default build, "every variant off".
        variant_files = sorted(glob.glob(os.path.join(folder, "variants*.yaml")),
                               key=lambda p: (os.path.basename(p) != "variants.yaml", p))
        keys = {}
        for path in variant_files:
            for key, values in (yaml.safe_load(read(path)) or {}).items():
                for value in values:
                    value = "None" if value is None else str(value)
                    if value not in keys.setdefault(key, []):
                        keys[key].append(value)
    except yaml.YAMLError as e:
        report.fail(recipe, "not YAML: %s" % e)
        return
    if doc.get("schema_version") != 1:
        report.fail(recipe, "recipe.yaml is not the v1 format (schema_version: 1)")
    context = {k: str(v) for k, v in (doc.get("context") or {}).items()}
    # Every variant off: each key at its first value in variants.yaml (the default build).
    base_variant = dict(context, **{k: v[0] for k, v in keys.items()})
    try:
        rendered = _render(doc, base_variant)
    except Exception as e:  # noqa: BLE001
        report.fail(recipe, "cannot render recipe.yaml: %s: %s" % (type(e).__name__, e))
        return
    check_version(report, facts, recipe, str(rendered.get("package", {}).get("version")))
    check_license(report, recipe, rendered.get("about", {}).get("license"))
    source_path = (rendered.get("source") or {}).get("path")
    if source_path is not None and not same_folder(os.path.join(folder, source_path), facts.src):
        report.fail(recipe, "source.path %r is not the checkout %s" % (source_path, facts.src))
    script = rendered.get("build", {}).get("script", {})
    if not isinstance(script, dict) or "file" not in script:
        report.fail(recipe, "build.script has no file: (the build script the check runs)")
        return
    script_path = os.path.join(folder, script["file"] if script["file"].endswith(".sh") else script["file"] + ".sh")
    with tempfile.TemporaryDirectory(prefix="porta-conda-") as tmp:
        bindir = os.path.join(tmp, "bin")
        os.makedirs(bindir)
        log = os.path.join(tmp, "cmake.log")
        # The stand-in cmake: one line per call, its arguments NUL-separated.
        with open(os.path.join(bindir, "cmake"), "w") as f:
            f.write("#!/bin/sh\nfor a in \"$@\"; do printf '%%s\\0' \"$a\" >> '%s'; done\necho >> '%s'\n" % (log, log))
        os.chmod(os.path.join(bindir, "cmake"), 0o755)

        def run(variant):
            env_vars = _render(doc, variant).get("build", {}).get("script", {}).get("env", {}) or {}
            env = {"PATH": bindir + os.pathsep + os.environ.get("PATH", ""), "SRC_DIR": facts.src,
                   "PREFIX": os.path.join(tmp, "prefix"), "CPU_COUNT": "1", "CMAKE_ARGS": "", "HOME": tmp}
            env.update({k: str(v) for k, v in env_vars.items()})
            open(log, "w").close()
            done = subprocess.run(["bash", script_path], cwd=tmp, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, universal_newlines=True)
            if done.returncode != 0:
                raise RuntimeError("build.sh failed for %s:\n%s" % (variant, done.stdout))
            calls = [line.split("\0")[:-1] for line in read(log).splitlines() if line]
            configure = [c for c in calls if "-S" in c or any(a.startswith("-D") for a in c)]
            if len(configure) != 1:
                raise RuntimeError("build.sh ran %d cmake configures, expected one" % len(configure))
            source = configure[0][configure[0].index("-S") + 1] if "-S" in configure[0] else None
            if source != facts.src:
                raise RuntimeError("build.sh configures %r, not $SRC_DIR" % source)
            return parse_defines(configure[0])

        try:
            baseline = run(base_variant)
            toggled = {}
            for key, values in sorted(keys.items()):
                for value in values[1:]:
                    toggled["%s=%s" % (key, value)] = run(dict(base_variant, **{key: value}))
        except Exception as e:  # noqa: BLE001
            report.fail(recipe, str(e))
            return
    check_renders(report, facts, recipe, baseline, toggled)
    report.note(recipe, "variant keys %s" % ", ".join("%s=%s" % (k, "|".join(v)) for k, v in sorted(keys.items())))


def mirror_with_renames(src, renames, tmp):
    """A tree in tmp that is src (links to its entries) except for copies of the files named in
    renames, each (file, old, new) applied: the failing tests' checkout, with its own recipes."""
    def materialize(rel_dir):
        # rel_dir and the folders above it become real folders whose other entries link to src.
        path = tmp
        for part in [p for p in rel_dir.split("/") if p]:
            path = os.path.join(path, part)
            if os.path.islink(path):
                os.unlink(path)
                os.mkdir(path)
                origin = os.path.join(src, os.path.relpath(path, tmp))
                for entry in os.listdir(origin):
                    os.symlink(os.path.join(origin, entry), os.path.join(path, entry))

    for entry in os.listdir(src):
        os.symlink(os.path.join(src, entry), os.path.join(tmp, entry))
    for rel, old, new in renames:
        materialize(os.path.dirname(rel))
        path = os.path.join(tmp, rel)
        text = read(path)
        if old not in text:
            raise SystemExit("check_recipes: --rename: %r is not in %s" % (old, rel))
        os.unlink(path)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new))
    return tmp


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", help="porta's checkout (CMakeLists.txt, cmake/, include/, packaging/)")
    parser.add_argument("--rename", nargs=3, action="append", default=[], metavar=("FILE", "OLD", "NEW"),
                        help="check a copy of the checkout with OLD replaced by NEW in FILE (a path in the checkout)")
    parser.add_argument("--expect-fail", metavar="TEXT",
                        help="succeed only when a problem whose line holds TEXT is found")
    parser.add_argument("--cmake", help="the cmake that runs the vcpkg portfile (default: cmake on PATH)")
    parser.add_argument("-v", "--verbose", action="store_true", help="also say what each variant drives")
    args = parser.parse_args()
    src = os.path.realpath(args.source)
    if args.cmake:
        CMAKE[0] = args.cmake
    with tempfile.TemporaryDirectory(prefix="porta-recipes-") as tmp:
        if args.rename:
            src = mirror_with_renames(src, args.rename, os.path.realpath(tmp))
        report = run_checks(src)
    if args.verbose:
        for line in report.notes:
            print("  " + line)
    for line in report.problems:
        print("FAIL " + line)
    if args.expect_fail is not None:
        caught = [p for p in report.problems if args.expect_fail in p]
        print("expected a failure naming %r: %s" % (args.expect_fail, "found" if caught else "none found"))
        return 0 if caught else 1
    print("%d problem(s)" % len(report.problems))
    return 1 if report.problems else 0


def run_checks(src):
    facts = CMakeFacts(src)
    report = Report()
    packaging = os.path.join(src, "packaging")
    for path, check in ((os.path.join(packaging, "spack", "package.py"), check_spack),
                        (os.path.join(packaging, "vcpkg"), check_vcpkg),
                        (os.path.join(packaging, "conda"), check_conda)):
        if not os.path.exists(path):
            report.fail(os.path.relpath(path, src), "missing")
        else:
            check(report, facts, path)
    print("porta %s; CMake options: %d; switches that need a variant: %s"
          % (facts.version, len(facts.options), ", ".join(facts.required)))
    return report


if __name__ == "__main__":
    sys.exit(main())

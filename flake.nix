{
  # Dev shell and package for rubric-workbench from nixpkgs' python3Packages.
  # Never evaluated or built on the project's machines (nix cannot fetch nixpkgs there), and no
  # flake.lock is committed: `nix flake lock` writes one on first use; nixpkgs is pinned to a
  # release branch so that lock stays on a stable package set. Please report problems.
  description = "rubric-workbench: evaluate IR, generation and RAG systems with LLM-graded rubrics";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-25.05";
  inputs.flake-utils.url = "github:numtide/flake-utils";

  outputs = { self, nixpkgs, flake-utils }:
    flake-utils.lib.eachDefaultSystem (system:
      let
        pkgs = import nixpkgs { inherit system; };
        py = pkgs.python3Packages;
        rubric-workbench = py.buildPythonPackage {
          pname = "rubric-workbench";
          # the one version source: `__version__` in src/rubric/__init__.py (newlines made spaces,
          # since builtins.match must match the whole text)
          version = builtins.elemAt (builtins.match ".*__version__ = \"([^\"]+)\".*"
            (builtins.replaceStrings [ "\n" ] [ " " ] (builtins.readFile ./src/rubric/__init__.py))) 0;
          pyproject = true;
          src = ./.;
          build-system = [ py.hatchling ];
          dependencies = with py; [
            typer pydantic numpy scipy tqdm openai nltk rapidfuzz
            pytrec-eval-terrier ir-measures
          ];
          optional-dependencies = {
            hf = with py; [ torch transformers ];
            plot = with py; [ matplotlib ];
          };
          nativeCheckInputs = with py; [
            pytestCheckHook scikit-learn krippendorff tokenizers torch transformers matplotlib hypothesis
          ];
          # The sandbox has no writable $HOME (caches, matplotlib's config) and no network: the
          # fast selection of `make test-fast` (no slow tests, no validation on third-party data;
          # the tests start their model server on 127.0.0.1 and build their models offline).
          preCheck = ''
            export HOME=$TMPDIR OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1
          '';
          pytestFlagsArray = [ "-m" "'not slow'" ];
          disabledTestPaths = [ "tests/validation" ];
          pythonImportsCheck = [ "rubric" ];
        };
      in {
        packages.default = rubric-workbench;
        devShells.default = pkgs.mkShell {
          packages = [
            (pkgs.python3.withPackages (ps: [ rubric-workbench ]
              ++ rubric-workbench.optional-dependencies.hf
              ++ (with ps; [ pytest scikit-learn krippendorff ruff tokenizers matplotlib hypothesis ])))
          ];
          shellHook = ''
            export OMP_NUM_THREADS=''${OMP_NUM_THREADS:-2}
          '';
        };
      });
}

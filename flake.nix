{
  # Dev shell and package for rubric-workbench from nixpkgs' python3Packages.
  # Untested on the project's CI machines (nix cannot fetch nixpkgs there); please report problems.
  description = "rubric-workbench: evaluate IR, generation and RAG systems with LLM-graded rubrics";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";
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
            hf = with py; [ torch transformers accelerate ];
            plot = with py; [ matplotlib ];
          };
          nativeCheckInputs = with py; [ pytestCheckHook scikit-learn tokenizers torch transformers matplotlib hypothesis ];
          pythonImportsCheck = [ "rubric" ];
        };
      in {
        packages.default = rubric-workbench;
        devShells.default = pkgs.mkShell {
          packages = [
            (pkgs.python3.withPackages (ps: [ rubric-workbench ]
              ++ rubric-workbench.optional-dependencies.hf
              ++ (with ps; [ pytest scikit-learn ruff tokenizers matplotlib hypothesis ])))
          ];
          shellHook = ''
            export OMP_NUM_THREADS=''${OMP_NUM_THREADS:-2}
          '';
        };
      });
}

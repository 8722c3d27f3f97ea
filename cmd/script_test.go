package cmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"tdsc/internal/testenv"
)

// TestMain lets the test binary act as the real tdsc command inside the
// scripts of testdata/script: `exec tdsc ...` runs Main in a child process,
// with real stdout, stderr and exit codes.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"tdsc": func() { os.Exit(Main()) },
	})
}

// TestScripts runs the command-line scripts in testdata/script. Inside a
// script, $DATA is the shared data folder and $CROP the small balloons crop
// committed under testdata/. Scripts that need the shared data start with
// `[!data] skip`; under CI the data must be there (testenv.DataDir).
func TestScripts(t *testing.T) {
	data := os.Getenv("TDSC_DATA")
	if data != "" || os.Getenv("CI") == "true" {
		data = testenv.DataDir(t)
	}
	crop, err := filepath.Abs(filepath.Join("..", "testdata", "balloons_crop128"))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(env *testscript.Env) error {
			env.Setenv("DATA", data)
			env.Setenv("CROP", crop)
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "data":
				return data != "", nil
			}
			return false, nil
		},
	})
}

package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"tdsc/internal/batch"
	"tdsc/internal/denoise"
	"tdsc/internal/methods"
)

func newBatchCmd() *cobra.Command {
	var (
		planFile, out, shard string
		scenes, methods      []string
		only                 []string
		sigmas               []float64
		seeds                []uint
		list, force, keep    bool
		threads              int
	)
	c := &cobra.Command{
		Use:   "batch (--plan FILE | --scenes GLOB --sigma S,… --method M … --out ROOT)",
		Short: "Run denoise over a dataset (scenes × σ × seeds × methods); resumable, shardable",
		Long: `batch runs every cell of the grid scene × noise level σ × seed × method: it adds the
noise (as tdsc noise does) and denoises the noisy cube with the method (as tdsc denoise
does, in a child process), scores the result against the clean scene (as tdsc eval
does) and writes the cell's result file. tdsc batch report merges the result files
into one table.

The grid comes from flags or from a JSON plan file (--plan):

  {"scenes":  ["cave/*_ms"],                 paths or glob patterns
   "sigmas":  [10, 30, 50],
   "seeds":   [1],                           optional, default [1]
   "methods": [{"label": "2dsc", "method": "2dsc"},
               {"label": "sc30", "method": "sc", "flags": ["--atoms", "30"]}],
   "out":     "results"}

Relative paths in a plan are relative to the plan file's folder; --out overrides
"out". On the command line --method takes a method and its denoise flags as one
string, which is also the label: --method 'sc --atoms 30', or with a label in
front: --method 'sc30=sc --atoms 30'. Everything is checked
before anything runs: the scenes exist, the labels are distinct, every flag is a
denoise flag that applies to its method (--sigma, --input, --out, --threads and the
like are set by batch).

Layout under ROOT, every file written atomically:
  SCENE/sigmaS-seedN/noisy.hdr (.img)   the noisy cube, shared by the methods
  SCENE/sigmaS-seedN/LABEL.json         the result of a cell: scores, wall time,
                                        peak memory, version, the cell's fingerprint
  SCENE/sigmaS-seedN/LABEL.hdr (.img)   the denoised cube, with --keep-outputs
A label becomes a file name with every run of characters other than letters,
digits, '.', '+', '-' and '_' replaced by '_'. SCENE/sigmaS-seedN/LABEL is the
cell's id.

Resuming: a cell whose result exists and was made by the same scene path, σ, seed,
method and flags (its fingerprint) is skipped, so a rerun of an interrupted batch
does only what is left (at most the cells in flight are lost); a result with another
fingerprint is redone, and said so on stderr. --force redoes every cell. The tdsc
version and --threads are not part of the fingerprint: use --force after changing
the program.

Sharding: --shard I/N (1 ≤ I ≤ N) runs the I-th of N disjoint parts. The cells are
ordered by scene name, σ, seed, then the plan's methods; the noisy cubes (scene, σ,
seed) are dealt round-robin to the shards, so the methods of one cube stay in one
shard. Shards count from 1, like Slurm array ids of --array=1-N:
  parallel tdsc batch --plan p.json --threads 1 --shard {}/4 ::: 1 2 3 4
  sbatch --array=1-8 --wrap 'tdsc batch --plan p.json --shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT'
--list prints the ids of the cells (of the shard, with --shard), one a line: a job
list for --only ID, which runs the cells named.

A failing cell is reported and the batch goes on; it exits with status 1 when any
cell failed, 130 when interrupted.`,
		Example: "  tdsc batch --scenes 'cave/*_ms' --sigma 10,30,50 --method 2dsc --method nonlocal --out results\n" +
			"  tdsc batch --plan plan.json --shard 2/4\n  tdsc batch report results",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fl := cmd.Flags()
			plan, baseDir, err := batchPlan(fl, planFile, scenes, sigmas, seeds, methods)
			if err != nil {
				return err
			}
			if fl.Changed("out") {
				plan.Out, err = filepath.Abs(out)
				if err != nil {
					return err
				}
			}
			if fl.Changed("threads") && threads < 1 {
				return fmt.Errorf("--threads must be at least 1, got %d", threads)
			}
			var sh batch.Shard
			if shard != "" {
				if sh, err = batch.ParseShard(shard); err != nil {
					return err
				}
			}
			res, err := batch.Resolve(plan, baseDir, checkBatchMethod)
			if err != nil {
				if planFile != "" {
					return fmt.Errorf("plan %s: %w", planFile, err)
				}
				return err
			}
			all := res.Groups()
			groups := all
			switch {
			case shard != "":
				groups = sh.Select(all)
			case len(only) > 0:
				if groups, err = batch.Only(all, only); err != nil {
					return err
				}
			}
			if list {
				w := cmd.OutOrStdout()
				for _, g := range groups {
					for _, c := range g.Cells {
						fmt.Fprintln(w, c.ID())
					}
				}
				return nil
			}
			log := newReporter(cmd)
			if shard != "" && len(groups) == 0 {
				log.Logf("batch: shard %s has no cells: the plan has %d noisy cubes (scene × σ × seed), and a shard takes whole cubes", shard, len(all))
				return nil
			}
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("cannot find the tdsc executable to run denoise with: %v", err)
			}
			if err := os.MkdirAll(res.Root, 0o755); err != nil {
				return err
			}
			quiet, _ := fl.GetBool("quiet")
			r := &batch.Runner{Root: res.Root, Exe: exe, Version: versionString(), Threads: threads,
				Force: force, KeepOutputs: keep, Quiet: quiet, Report: log}
			n := batch.CellCount(groups)
			what := fmt.Sprintf("%d cells", n)
			if shard != "" {
				what += fmt.Sprintf(" (shard %d/%d of %d)", sh.Index, sh.Count, batch.CellCount(all))
			}
			log.Logf("batch: %s under %s", what, res.Root)
			sum, err := r.Run(cmd.Context(), groups)
			if err != nil {
				return err
			}
			log.Logf("batch: %d denoised, %d done before, %d failed", sum.Ran, sum.Current, sum.Failed)
			if sum.Failed > 0 {
				return fmt.Errorf("%d of %d cells failed (a rerun retries them):\n  %s", sum.Failed, n, strings.Join(sum.Failures, "\n  "))
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&planFile, "plan", "", "JSON plan file (instead of --scenes, --sigma, --seed and --method)")
	f.StringSliceVar(&scenes, "scenes", nil, pathHelp("clean scenes")+"; paths or glob patterns (repeatable, comma-separated)")
	f.Float64SliceVar(&sigmas, "sigma", nil, "noise levels on the [0, 255] scale, comma-separated")
	f.UintSliceVar(&seeds, "seed", []uint{1}, "noise seeds, comma-separated")
	f.StringArrayVar(&methods, "method", nil, "a denoise method and its flags as one string, also its label, e.g. 'sc --atoms 30' or 'sc30=sc --atoms 30' (repeatable)")
	f.StringVarP(&out, "out", "o", "", "output root (overrides the plan's \"out\")")
	f.StringVar(&shard, "shard", "", "run only the I-th of N disjoint parts, I/N with 1 ≤ I ≤ N (e.g. $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT)")
	f.StringSliceVar(&only, "only", nil, "run only these cells (ids as --list prints them; repeatable, comma-separated)")
	f.BoolVar(&list, "list", false, "print the ids of the cells (of the shard) instead of running them")
	f.BoolVar(&force, "force", false, "redo cells whose results are current")
	f.BoolVar(&keep, "keep-outputs", false, "keep the denoised cubes (SCENE/sigmaS-seedN/LABEL.hdr)")
	f.IntVar(&threads, "threads", 0, "worker goroutines of each denoise run (default: all cores); results do not depend on it")
	excludeEachOther(c, "shard", "only")
	_ = c.RegisterFlagCompletionFunc("method", completeMethods)
	c.AddCommand(newBatchReportCmd())
	return c
}

// batchPlan returns the plan of the command line: the plan file, or the
// flags that give one, and the folder its relative paths start from.
func batchPlan(fl *pflag.FlagSet, planFile string, scenes []string, sigmas []float64, seeds []uint, methods []string) (*batch.Plan, string, error) {
	gridFlags := []string{"scenes", "sigma", "seed", "method"}
	if planFile != "" {
		for _, name := range gridFlags {
			if fl.Changed(name) {
				return nil, "", fmt.Errorf("--%s: the plan file %s gives the grid; give either --plan or the flags", name, planFile)
			}
		}
		p, err := batch.ReadPlan(planFile)
		if err != nil {
			return nil, "", err
		}
		dir, err := filepath.Abs(filepath.Dir(planFile))
		return p, dir, err
	}
	p := &batch.Plan{Scenes: scenes, Sigmas: sigmas}
	for _, s := range seeds {
		p.Seeds = append(p.Seeds, uint64(s))
	}
	for _, m := range methods {
		words := strings.Fields(m)
		if len(words) == 0 {
			return nil, "", errors.New("--method: empty")
		}
		label, name, named := strings.Cut(words[0], "=")
		if !named {
			label, name = strings.Join(words, " "), words[0]
		}
		p.Methods = append(p.Methods, batch.Method{Label: label, Name: name, Flags: words[1:]})
	}
	dir, err := os.Getwd()
	return p, dir, err
}

// batchSets are the denoise flags that batch sets for every cell, so a
// method may not.
var batchSets = []string{"input", "out", "ref", "sigma", "method", "force", "quiet", "threads", denoise.SaveDict.Name}

// batchRefuses are the denoise flags that name an output of their own,
// which every cell would write over.
var batchRefuses = []string{"save-mask", "save-residual"}

// checkSize is the cube size values are checked against before a batch
// runs (checkBatchMethod): larger than any patch, window or rank a method
// takes, so that only the values themselves are judged; a setting too
// large for a particular scene is found when its cell runs.
const checkSize = 1 << 12

// checkBatchMethod is batch.CheckMethod with tdsc denoise's own flags: the
// words are parsed by a fresh denoise command's flag set, so a batch
// accepts exactly what denoise does, and the method's settings by its
// declarations (denoise.Spec.Parse), which refuse flags of other methods
// as denoise does. The method is then built from them and its settings
// checked at every σ of the plan (denoise.Method.Check), so that a bad
// value stops the batch before it runs anything. A --dict file is read
// now, not when its first cell runs. The canonical flags spell every
// setting as its declaration formats it.
func checkBatchMethod(name string, words []string, baseDir string, sigmas []float64) ([]string, error) {
	spec, err := methods.Lookup(name)
	if err != nil {
		return nil, err
	}
	var df denoiseFlags
	fs := newDenoiseCmdWith(&df).Flags()
	if err := fs.Parse(withBareValues(fs, words, false)); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, errors.New("--help is not a denoise setting")
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("%q is not a flag (want --name value …)", fs.Arg(0))
	}
	var problems []string
	fs.Visit(func(f *pflag.Flag) {
		if slices.Contains(batchSets, f.Name) {
			problems = append(problems, fmt.Sprintf("--%s is set by tdsc batch, not per method", f.Name))
		}
		if slices.Contains(batchRefuses, f.Name) {
			problems = append(problems, fmt.Sprintf("--%s writes one file per run, not one per cell: run tdsc denoise for it", f.Name))
		}
	})
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	dict := df.settings[denoise.Dict.Name]
	if fs.Changed(denoise.Dict.Name) && !filepath.IsAbs(dict.text) && dict.text != "" {
		_ = fs.Set(denoise.Dict.Name, filepath.Join(baseDir, dict.text))
	}
	if _, err := df.noise.model(); err != nil {
		return nil, err
	}
	if n, _ := fs.GetInt("tile"); n < 0 {
		return nil, fmt.Errorf("--tile must be a number of lines ≥ 1, got %d", n)
	}
	if fs.Changed("max-memory") {
		if _, err := parseBytes(fs.Lookup("max-memory").Value.String()); err != nil {
			return nil, fmt.Errorf("--max-memory: %v", err)
		}
	}
	v, err := spec.Parse(df.settings.given(fs))
	if err != nil {
		return nil, flagError(err)
	}
	m, _, err := spec.Build(v, true, denoise.Env{})
	if err != nil {
		if fs.Changed(denoise.Dict.Name) {
			return nil, fmt.Errorf("--dict: %w", flagError(err))
		}
		return nil, flagError(err)
	}
	for _, sigma := range sigmas {
		if err := m.Check(sigma, checkSize, checkSize, checkSize); err != nil {
			return nil, fmt.Errorf("σ = %g: %w", sigma, flagError(err))
		}
	}
	spelled := v.Canonical(spec.Flags())
	var canonical []string
	fs.Visit(func(f *pflag.Flag) {
		value, ok := spelled[f.Name]
		if !ok {
			value = f.Value.String()
		}
		canonical = append(canonical, "--"+f.Name+"="+value)
	})
	return canonical, nil
}

func newBatchReportCmd() *cobra.Command {
	var asCSV, asJSON bool
	c := &cobra.Command{
		Use:   "report ROOT",
		Short: "Merge the results of tdsc batch under ROOT into one table",
		Long: `report reads every result under ROOT (SCENE/sigmaS-seedN/LABEL.json) and prints one
table on stdout: a row per scene, σ and seed, the PSNR (dB) and SSIM of every method
(label) side by side, and after the rows of each σ their mean. A method missing from
some row of a σ has no mean there ("—"); stderr says how many cells are missing.
Markdown by default; --csv adds SAM and ERGAS at full precision; --json also has
every cell's wall time and peak memory.`,
		Example: "  tdsc batch report results\n  tdsc batch report results --csv > table.csv",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := batch.Collect(args[0])
			if err != nil {
				return err
			}
			log := newReporter(cmd)
			for _, err := range t.Unreadable {
				log.Logf("report: left out %v", err)
			}
			if t.Missing > 0 {
				log.Logf("report: %d cells have no result yet", t.Missing)
			}
			w := cmd.OutOrStdout()
			switch {
			case asJSON:
				return t.WriteJSON(w)
			case asCSV:
				return t.WriteCSV(w)
			}
			return t.WriteMarkdown(w)
		},
	}
	c.Flags().BoolVar(&asCSV, "csv", false, "print CSV")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	excludeEachOther(c, "csv", "json")
	return c
}

// Package cmd holds tdsc's command line: it turns flags into calls of the
// internal packages and nothing more.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"

	"github.com/spf13/cobra"

	"tdsc/internal/atomicfile"
	"tdsc/internal/formats"
	"tdsc/internal/methods"
	"tdsc/internal/tsc"
)

// version is the release of tdsc; builds from a tagged module report the tag.
var version = "0.1.0"

// Main runs tdsc with os.Args and returns the process exit code: 0 on
// success, 1 on any error, 3 when eval's gate fails, 130 when interrupted.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRoot(os.Stdout, os.Stderr)
	root.SetArgs(bareFlagArgs(root, os.Args[1:]))
	return exitCode(root.ExecuteContext(ctx), os.Stderr)
}

// exitCode reports err, if any, on stderr and returns the exit code for it.
// Commands return the context's error when a signal cancels them; "context
// canceled" would tell a user who pressed Ctrl-C nothing. An output that
// exists gets the hint of how to replace it, which the library packages
// cannot know.
func exitCode(err error, stderr io.Writer) int {
	var exists *atomicfile.ExistsError
	var gateFailed *gateFailure
	switch {
	case err == nil:
		return 0
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "tdsc: interrupted")
		return 130
	case errors.As(err, &exists):
		fmt.Fprintf(stderr, "tdsc: %v (use --force to overwrite)\n", err)
		return 1
	case errors.As(err, &gateFailed):
		fmt.Fprintf(stderr, "tdsc: %v\n", err)
		return 3
	}
	fmt.Fprintf(stderr, "tdsc: %v\n", err)
	return 1
}

// bareFlagArgs returns args, the arguments of tdsc, with withBareValues
// applied for the flags of the command they run (or, for the shell's
// completion request, complete).
func bareFlagArgs(root *cobra.Command, args []string) []string {
	completing := len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd)
	rest := args
	if completing {
		rest = args[1:]
	}
	cmd, _, err := root.Find(rest)
	if err != nil || cmd == root {
		return args
	}
	return append(args[:len(args)-len(rest):len(args)-len(rest)], withBareValues(cmd.Flags(), rest, completing)...)
}

// usageError is a command-line mistake, followed in its message by where
// the right usage is listed.
type usageError struct {
	err     error
	command string
}

func (e *usageError) Error() string {
	return fmt.Sprintf("%v\nRun '%s --help' for usage.", e.err, e.command)
}

func (e *usageError) Unwrap() error { return e.err }

// versionString names the release, the Go toolchain, the BLAS in use and
// GDAL's release, if the build has GDAL.
func versionString() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	return fmt.Sprintf("%s (%s %s/%s, BLAS: %s, GDAL: %s)", v, runtime.Version(), runtime.GOOS, runtime.GOARCH, tsc.BLASName(), formats.GDAL())
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "tdsc",
		Short: "Denoise multispectral images with two-dimensional sparse coding",
		Long: wrap("tdsc denoises multispectral images: cubes in " + formats.Paths() +
			". Its heart is two-dimensional sparse coding (2DSC): every small patch of pixels × bands is" +
			" approximated by a sparse tensor-linear combination (t-product) of learned dictionary atoms. " +
			fmt.Sprintf("The default method, %s, is %s; tdsc denoise --help lists every method.",
				methods.Default().Name, methods.Default().Summary)),
		Version:       versionString(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetVersionTemplate("tdsc {{.Version}}\n")
	// A mistyped flag says where the right ones are listed, as a mistyped
	// command already does.
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &usageError{err: err, command: c.CommandPath()}
	})
	root.PersistentFlags().BoolP("quiet", "q", false, "print no progress or log lines on stderr")
	root.PersistentPreRun = func(cmd *cobra.Command, _ []string) { warnDeprecated(cmd) }
	root.AddCommand(newNoiseCmd(), newEvalCmd(), newTrainCmd(), newDenoiseCmd(), newCompareCmd(), newInspectCmd(), newNLFCmd(), newAtomsCmd(), newBatchCmd())
	return root
}

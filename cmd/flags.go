package cmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"tdsc/internal/option"
)

// deprecatedSpelling registers old (with its one-letter shorthand, if any)
// as a hidden, deprecated spelling of the flag current: both set the same
// value. Old spellings keep scripts written for earlier releases working;
// warnDeprecated says on stderr which spelling replaces them. (pflag's own
// MarkDeprecated would print its notice through cobra on stdout, which
// carries results.)
func deprecatedSpelling(f *pflag.FlagSet, old, shorthand, current string) {
	cur := f.Lookup(current)
	f.VarP(cur.Value, old, shorthand, cur.Usage)
	_ = f.MarkHidden(old)
	_ = f.SetAnnotation(old, replacedBy, []string{current})
}

// replacedBy annotates a deprecated flag with the flag that replaces it.
const replacedBy = "tdsc-replaced-by"

// warnDeprecated writes a notice on stderr for every deprecated spelling
// used on the command line of cmd.
func warnDeprecated(cmd *cobra.Command) {
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if by, ok := fl.Annotations[replacedBy]; ok {
			fmt.Fprintf(cmd.ErrOrStderr(), "tdsc: --%s is deprecated: use --%s\n", fl.Name, by[0])
		}
	})
}

// excludeEachOther makes giving both flag a and flag b of c an error that
// names them, checked before the command runs. (Cobra's own flag groups,
// MarkFlagsMutuallyExclusive, say "if any flags in the group [a b] are
// set none of the others can be".)
func excludeEachOther(c *cobra.Command, a, b string) {
	next := c.PreRunE
	c.PreRunE = func(cmd *cobra.Command, args []string) error {
		if cmd.Flags().Changed(a) && cmd.Flags().Changed(b) {
			return fmt.Errorf("--%s and --%s exclude each other: give one of them", a, b)
		}
		if next != nil {
			return next(cmd, args)
		}
		return nil
	}
}

// flagError names the flag of an *option.Error in err's message: a reason
// that starts with the setting's name gets dashes ("--beta must be …"),
// another gets the flag in front ("--weights: …"). Other errors pass as
// they are.
func flagError(err error) error {
	var oe *option.Error
	if !errors.As(err, &oe) {
		return err
	}
	msg := err.Error()
	reason := oe.Error()
	prefix := strings.TrimSuffix(msg, reason)
	if strings.HasPrefix(reason, oe.Field+" ") {
		return errors.New(prefix + "--" + reason)
	}
	return fmt.Errorf("%s--%s: %s", prefix, oe.Field, reason)
}

// Annotations of flags with a fixed set of values (fixedValues).
const (
	// valuesAnnotation lists the values the flag takes.
	valuesAnnotation = "tdsc-values"
	// bareAnnotation is the value of the flag given without one.
	bareAnnotation = "tdsc-bare"
)

// fixedValues declares that the flag name of c takes one of values: the
// shell completes them, from this one list, which is the list the flag's
// parser checks (the caller passes that list, not a copy of it).
func fixedValues(c *cobra.Command, name string, values []string) {
	_ = c.Flags().SetAnnotation(name, valuesAnnotation, values)
	_ = c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
}

// bareValue lets the flag name of c, of fixed values, be given without a
// value, meaning value: "--sigma-per-band" alone is "--sigma-per-band=on",
// while "--sigma-per-band off" is off, as the help writes it (see
// withBareValues). (pflag's NoOptDefVal would read "--sigma-per-band off"
// as on followed by an argument "off", and the shell would not complete
// the value after a space.)
func bareValue(c *cobra.Command, name, value string) {
	_ = c.Flags().SetAnnotation(name, bareAnnotation, []string{value})
}

// withBareValues returns args with every flag of fs that has a bare value
// (bareValue) and is not followed by a value given that value
// ("--sigma-per-band" → "--sigma-per-band=on"): when it is the last
// argument or the next one is a flag. With completing (the arguments of
// the shell's completion request), the last argument is the word being
// typed and is left as it is.
func withBareValues(fs *pflag.FlagSet, args []string, completing bool) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		name, isLong := strings.CutPrefix(a, "--")
		fl := fs.Lookup(name)
		last := i == len(args)-1
		if !isLong || fl == nil || len(fl.Annotations[bareAnnotation]) == 0 || completing && last {
			out = append(out, a)
			continue
		}
		if next := i + 1; last || strings.HasPrefix(args[next], "-") {
			a += "=" + fl.Annotations[bareAnnotation][0]
		}
		out = append(out, a)
	}
	return out
}

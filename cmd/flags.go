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

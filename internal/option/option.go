// Package option holds the error type that every package of tdsc returns
// for a bad setting, so that a caller can tell which setting is wrong
// without parsing the message: the command line maps Field to its flag.
package option

import "fmt"

// Error reports a setting that cannot be used. Field names the setting in
// the spelling of its command-line flag without dashes (for example
// "stride"), so that the command line can name the flag; Reason says what
// is wrong with Value.
type Error struct {
	Field  string
	Value  any
	Reason string
}

// Errorf returns an *Error for field whose Reason is formatted from format
// and args.
func Errorf(field string, value any, format string, args ...any) *Error {
	return &Error{Field: field, Value: value, Reason: fmt.Sprintf(format, args...)}
}

// Error returns the reason alone: it is written to be read on its own, and
// the command line adds the flag's name where it helps.
func (e *Error) Error() string { return e.Reason }

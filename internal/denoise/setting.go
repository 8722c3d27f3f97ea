package denoise

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"tdsc/internal/option"
)

// Kind is the type of a setting's value.
type Kind int

const (
	// Int is a whole number.
	Int Kind = iota
	// Uint is a whole number ≥ 0 (a seed).
	Uint
	// Float is a number.
	Float
	// Enum is one of the words Setting.Choices.
	Enum
	// IntList is whole numbers separated by commas, as many as
	// Setting.Lengths allows.
	IntList
	// File is the path of a file.
	File
)

// Special is a value of an Int or IntList setting outside its range that
// means something: 0 for "chosen from the data", -1 for "none".
type Special struct {
	Value   int
	Meaning string
}

// Setting declares one setting of a method: a flag of tdsc denoise, spelled
// --Name. A setting that is not given takes the method's default: its value
// is the zero value, as in gonum's settings structs, and the method's
// declaration of it (Field) turns it into the default. A zero typed on the
// command line is therefore an error unless Special gives 0 a meaning.
//
// The fields other than Name, Kind, Help and Default are the setting's
// rule: Parse applies it to a value given on the command line, and a
// method's validation to the value after defaults (CheckInt, CheckFloat,
// CheckInts), so that the rule and its wording are written once.
type Setting struct {
	// Name is the flag's spelling without dashes, also the Field of every
	// *option.Error about the setting.
	Name string
	Kind Kind
	// Help says what the setting is, for help texts, without its default.
	Help string
	// Default is the value a run takes when the setting is not given, as a
	// help text shows it: a number, or a rule such as "3σ". A method's
	// Field sets it with the default it takes.
	Default string

	// Min is the least value of an Int, Uint or IntList setting (of each
	// entry of a list).
	Min int
	// Special lists values below Min that mean something.
	Special []Special
	// Positive requires a Float to be finite and > 0.
	Positive bool
	// Choices are the words an Enum takes.
	Choices []string
	// Lengths are the numbers of entries an IntList takes (e.g. 3, or 1
	// and 3 where one stands for all three).
	Lengths []int
}

// WithMin returns s with the least value min.
func (s Setting) WithMin(min int) Setting {
	s.Min = min
	return s
}

// Syntax is how help texts show the setting's value: int, uint, float,
// string, file, or the spelling of a list such as R1,R2,R3.
func (s Setting) Syntax() string {
	switch s.Kind {
	case Int:
		return "int"
	case Uint:
		return "uint"
	case Float:
		return "float"
	case Enum:
		return "string"
	case File:
		return "file"
	case IntList:
		var alts []string
		for _, n := range s.Lengths {
			if n == 1 {
				alts = append(alts, "int")
				continue
			}
			parts := make([]string, n)
			for i := range parts {
				parts[i] = "R" + strconv.Itoa(i+1)
			}
			alts = append(alts, strings.Join(parts, ","))
		}
		return strings.Join(alts, "|")
	}
	panic(fmt.Sprintf("denoise: setting %s has unknown kind %d", s.Name, s.Kind))
}

// Specials is the help text of s.Special, such as "-1: none", or "".
func (s Setting) Specials() string {
	parts := make([]string, len(s.Special))
	for i, sp := range s.Special {
		parts[i] = fmt.Sprintf("%d: %s", sp.Value, sp.Meaning)
	}
	return strings.Join(parts, ", ")
}

// allowed reports whether v is in the range of an Int, Uint or IntList
// setting: at least Min, or one of the specials.
func (s Setting) allowed(v int) bool {
	return v >= s.Min || slices.ContainsFunc(s.Special, func(sp Special) bool { return sp.Value == v })
}

// rangeText is the rule of allowed in words: "at least 1 (or 0: from the
// data)".
func (s Setting) rangeText() string {
	t := fmt.Sprintf("at least %d", s.Min)
	if sp := s.Specials(); sp != "" {
		t += " (or " + sp + ")"
	}
	return t
}

// shapeText is how an IntList is spelled in words: "three whole numbers
// R1,R2,R3" or "one whole number or three R1,R2,R3".
func (s Setting) shapeText() string {
	words := []string{"", "one", "two", "three", "four", "five", "six"}
	var alts []string
	for i, n := range s.Lengths {
		w := strconv.Itoa(n)
		if n < len(words) {
			w = words[n]
		}
		noun := "whole numbers"
		if n == 1 {
			noun = "whole number"
		}
		if i > 0 {
			noun = ""
		}
		alt := strings.TrimSpace(w + " " + noun)
		if n > 1 {
			parts := make([]string, n)
			for j := range parts {
				parts[j] = "R" + strconv.Itoa(j+1)
			}
			alt += " " + strings.Join(parts, ",")
		}
		alts = append(alts, alt)
	}
	return strings.Join(alts, " or ")
}

// CheckInt returns an *option.Error when v, the value of an Int setting
// after defaults, breaks the setting's rule.
func (s Setting) CheckInt(v int) error {
	s.mustBe(Int)
	if s.allowed(v) {
		return nil
	}
	return option.Errorf(s.Name, v, "%s must be %s, got %d", s.Name, s.rangeText(), v)
}

// CheckInts is CheckInt for every entry of an IntList setting's value.
func (s Setting) CheckInts(v []int) error {
	s.mustBe(IntList)
	for _, x := range v {
		if !s.allowed(x) {
			return s.listError(v)
		}
	}
	return nil
}

// CheckFloat returns an *option.Error when v, the value of a Float setting
// after defaults, breaks the setting's rule.
func (s Setting) CheckFloat(v float64) error {
	s.mustBe(Float)
	if !s.Positive || v > 0 && !math.IsInf(v, 1) {
		return nil
	}
	return option.Errorf(s.Name, v, "%s must be a finite number > 0, got %v", s.Name, v)
}

// listError is the error for an IntList value with an entry out of range.
func (s Setting) listError(v []int) error {
	text := formatInts(v)
	return option.Errorf(s.Name, text, "%s must be %s, each %s, got %q", s.Name, s.shapeText(), s.rangeText(), text)
}

func (s Setting) mustBe(k Kind) {
	if s.Kind != k {
		panic(fmt.Sprintf("denoise: setting %s is not of kind %d", s.Name, k))
	}
}

// Parse reads text, the value of the setting as typed on the command line,
// and checks it against the rule: a typed value is never the default, so
// a zero is an error unless the rule allows it. The value is an int, uint64,
// float64, string or []int by Kind. Errors are *option.Error.
func (s Setting) Parse(text string) (any, error) {
	switch s.Kind {
	case Int:
		v, err := strconv.ParseInt(text, 0, strconv.IntSize)
		if err != nil {
			return nil, option.Errorf(s.Name, text, "%s must be a whole number, got %q", s.Name, text)
		}
		return int(v), s.CheckInt(int(v))
	case Uint:
		v, err := strconv.ParseUint(text, 0, 64)
		if err != nil {
			return nil, option.Errorf(s.Name, text, "%s must be a whole number ≥ 0, got %q", s.Name, text)
		}
		if v < uint64(max(s.Min, 0)) {
			return nil, option.Errorf(s.Name, v, "%s must be %s, got %d", s.Name, s.rangeText(), v)
		}
		return v, nil
	case Float:
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, option.Errorf(s.Name, text, "%s must be a number, got %q", s.Name, text)
		}
		return v, s.CheckFloat(v)
	case Enum:
		if !slices.Contains(s.Choices, text) {
			return nil, option.Errorf(s.Name, text, "%s must be %s, got %q", s.Name, orList(s.Choices), text)
		}
		return text, nil
	case File:
		if text == "" {
			return nil, option.Errorf(s.Name, text, "%s must name a file, got \"\"", s.Name)
		}
		return text, nil
	case IntList:
		parts := strings.Split(text, ",")
		if !slices.Contains(s.Lengths, len(parts)) {
			return nil, option.Errorf(s.Name, text, "%s must be %s, got %q", s.Name, s.shapeText(), text)
		}
		v := make([]int, len(parts))
		for i, p := range parts {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil {
				return nil, option.Errorf(s.Name, text, "%s must be %s, got %q", s.Name, s.shapeText(), text)
			}
			v[i] = n
		}
		return v, s.CheckInts(v)
	}
	panic(fmt.Sprintf("denoise: setting %s has unknown kind %d", s.Name, s.Kind))
}

// Format spells a value of the setting (as Parse returns it) in the
// canonical form that Parse reads back.
func (s Setting) Format(v any) string {
	switch x := v.(type) {
	case int:
		return strconv.Itoa(x)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return x
	case []int:
		return formatInts(x)
	}
	panic(fmt.Sprintf("denoise: setting %s has a value of type %T", s.Name, v))
}

func formatInts(v []int) string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// Values are the settings given for a method, parsed by its declarations
// (Spec.Build). A setting that was not given is absent: its accessor
// returns the zero value, which means the method's default. An accessor
// of the wrong kind for its setting panics: that is a mistake in the
// method's code, which the registry's tests catch.
type Values struct{ m map[string]any }

// Has reports whether s was given.
func (v Values) Has(s Setting) bool {
	_, ok := v.m[s.Name]
	return ok
}

func (v Values) get(s Setting, k Kind) any {
	s.mustBe(k)
	return v.m[s.Name]
}

// Int returns the value of an Int setting, 0 when it was not given.
func (v Values) Int(s Setting) int {
	x, _ := v.get(s, Int).(int)
	return x
}

// Uint returns the value of a Uint setting, 0 when it was not given.
func (v Values) Uint(s Setting) uint64 {
	x, _ := v.get(s, Uint).(uint64)
	return x
}

// Float returns the value of a Float setting, 0 when it was not given.
func (v Values) Float(s Setting) float64 {
	x, _ := v.get(s, Float).(float64)
	return x
}

// Ints returns the value of an IntList setting, nil when it was not given.
func (v Values) Ints(s Setting) []int {
	x, _ := v.get(s, IntList).([]int)
	return slices.Clone(x)
}

// String returns the value of an Enum or File setting, "" when it was not
// given.
func (v Values) String(s Setting) string {
	if s.Kind != File {
		s.mustBe(Enum)
	}
	x, _ := v.m[s.Name].(string)
	return x
}

// with returns a copy of v in which s has the value x.
func (v Values) with(s Setting, x any) Values {
	m := make(map[string]any, len(v.m)+1)
	for k, y := range v.m {
		m[k] = y
	}
	m[s.Name] = x
	return Values{m: m}
}

package denoise

import (
	"fmt"
	"slices"

	"tdsc/internal/option"
)

// Field declares one setting of a method whose options are a struct O, in
// one place: the Setting (name, kind, rule, help), the field of O that
// holds its value, and its default, both as help texts show it and as a
// run takes it. A method lists its settings as Fields; its flags
// (Fields.Settings), its options from the settings given (Fields.Options),
// the defaults for a noise level (Fields.Resolve) and the settings' rules
// on the resolved options (Fields.Check) all follow from the list, so that
// a new setting is its field in O and its line in the list.
//
// A Field is made by Value, Rule, Triple or Choice, which check that the
// setting's Kind is the field's type (a mismatch is a mistake in the
// method's code and panics when the package is loaded).
type Field[O any] struct {
	Setting
	// load copies the value given in v, if any, into the field.
	load func(o *O, v Values)
	// resolve sets the field, when it is zero, to its default for the
	// noise level sigma (nil: a zero stays, chosen from the data).
	resolve func(o *O, sigma float64)
	// check applies the setting's rule to the field's value.
	check func(o *O) error
}

// Fields are the settings of a method with options O, in the order help
// texts list them and defaults are resolved: a default that depends on
// another setting (a step no larger than the patch) comes after it.
type Fields[O any] []Field[O]

// scalar is the type of the field of an Int, Uint or Float setting.
type scalar interface{ int | uint64 | float64 }

// kindOf returns the Kind of a setting whose field is of type T.
func kindOf[T scalar]() Kind {
	switch any(*new(T)).(type) {
	case int:
		return Int
	case uint64:
		return Uint
	}
	return Float
}

// Value declares the setting s, held in the field at(o) of the options,
// with the default def at every noise level (which help texts show).
func Value[O any, T scalar](s Setting, at func(*O) *T, def T) Field[O] {
	return Rule(s, at, fmt.Sprint(def), func(*O, float64) T { return def })
}

// Rule declares the setting s, held in the field at(o) of the options,
// whose default is def(o, sigma) for noise level sigma, o with the
// settings declared before s resolved; help texts show it as text. A nil
// def leaves a zero value zero, for the method to choose from the data
// (as text says).
func Rule[O any, T scalar](s Setting, at func(*O) *T, text string, def func(o *O, sigma float64) T) Field[O] {
	if s.Kind != kindOf[T]() {
		panic(fmt.Sprintf("denoise: setting %s of kind %d is held in a field of type %T", s.Name, s.Kind, *new(T)))
	}
	s.Default = text
	f := Field[O]{Setting: s}
	f.load = func(o *O, v Values) {
		if !v.Has(s) {
			return
		}
		switch x := v.m[s.Name].(type) {
		case int:
			*at(o) = T(x)
		case uint64:
			*at(o) = T(x)
		case float64:
			*at(o) = T(x)
		}
	}
	if def != nil {
		f.resolve = func(o *O, sigma float64) {
			if p := at(o); *p == 0 {
				*p = def(o, sigma)
			}
		}
	}
	f.check = func(o *O) error {
		switch s.Kind {
		case Int:
			return s.CheckInt(int(*at(o)))
		case Float:
			return s.CheckFloat(float64(*at(o)))
		}
		return nil // a Uint's least value is Parse's to check; a zero takes the default
	}
	return f
}

// Triple declares the IntList setting s of three entries, or one that
// stands for all three, held in the field at(o) of the options. A zero
// entry takes def, which help texts show as text; a def of 0 leaves it
// zero, for the method to choose from the data.
func Triple[O any](s Setting, at func(*O) *[3]int, text string, def int) Field[O] {
	if s.Kind != IntList || slices.ContainsFunc(s.Lengths, func(n int) bool { return n != 1 && n != 3 }) {
		panic(fmt.Sprintf("denoise: setting %s is not a list of one or three whole numbers", s.Name))
	}
	s.Default = text
	return Field[O]{
		Setting: s,
		load: func(o *O, v Values) {
			switch x := v.Ints(s); len(x) {
			case 1:
				*at(o) = [3]int{x[0], x[0], x[0]}
			case 3:
				*at(o) = [3]int(x)
			}
		},
		resolve: func(o *O, _ float64) {
			p := at(o)
			for n := range p {
				if p[n] == 0 {
					p[n] = def
				}
			}
		},
		check: func(o *O) error { return s.CheckInts(at(o)[:]) },
	}
}

// Choice declares the Enum setting s, held in the field at(o) of the
// options, whose words are the String of choices. The first choice, the
// zero value of T, is the default.
func Choice[O any, T interface {
	comparable
	fmt.Stringer
}](s Setting, at func(*O) *T, choices ...T) Field[O] {
	var zero T
	if s.Kind != Enum || len(choices) == 0 || choices[0] != zero {
		panic(fmt.Sprintf("denoise: setting %s is not an Enum whose first choice is the zero value", s.Name))
	}
	s.Choices = make([]string, len(choices))
	for i, c := range choices {
		s.Choices[i] = c.String()
	}
	s.Default = s.Choices[0]
	return Field[O]{
		Setting: s,
		load: func(o *O, v Values) {
			if i := slices.Index(s.Choices, v.String(s)); i >= 0 {
				*at(o) = choices[i]
			}
		},
		check: func(o *O) error {
			if x := *at(o); !slices.Contains(choices, x) {
				return option.Errorf(s.Name, x, "%s must be %s, got %q", s.Name, orList(s.Choices), x.String())
			}
			return nil
		},
	}
}

// Within returns fs as settings of options O that hold a P at at(o): the
// settings of a part, such as the pilot of a method that runs another.
func Within[O, P any](fs Fields[P], at func(*O) *P) Fields[O] {
	out := make(Fields[O], len(fs))
	for i, f := range fs {
		g := Field[O]{Setting: f.Setting,
			load:  func(o *O, v Values) { f.load(at(o), v) },
			check: func(o *O) error { return f.check(at(o)) },
		}
		if f.resolve != nil {
			g.resolve = func(o *O, sigma float64) { f.resolve(at(o), sigma) }
		}
		out[i] = g
	}
	return out
}

// With returns a copy of fs with the setting of f's name replaced by f:
// the same setting with another method's default.
func (fs Fields[O]) With(f Field[O]) Fields[O] {
	i := slices.IndexFunc(fs, func(g Field[O]) bool { return g.Name == f.Name })
	if i < 0 {
		panic(fmt.Sprintf("denoise: no setting %s to replace", f.Name))
	}
	out := slices.Clone(fs)
	out[i] = f
	return out
}

// Only returns the settings of fs that names names, in the order of fs:
// the subset a part of a method reads (its learning alone).
func (fs Fields[O]) Only(names ...string) Fields[O] {
	var out Fields[O]
	for _, f := range fs {
		if slices.Contains(names, f.Name) {
			out = append(out, f)
		}
	}
	if len(out) != len(names) {
		panic(fmt.Sprintf("denoise: some of the settings %v are not declared", names))
	}
	return out
}

// Settings returns the declarations of fs, for a Spec's Settings.
func (fs Fields[O]) Settings() []Setting {
	out := make([]Setting, len(fs))
	for i, f := range fs {
		out[i] = f.Setting
	}
	return out
}

// Options returns the options that hold the settings given in v; those
// not given are zero, their defaults.
func (fs Fields[O]) Options(v Values) O {
	var o O
	fs.Load(&o, v)
	return o
}

// Load copies into o the settings given in v, leaving the others as they
// are.
func (fs Fields[O]) Load(o *O, v Values) {
	for _, f := range fs {
		f.load(o, v)
	}
}

// Resolve returns o with every zero setting set to its default for noise
// of standard deviation sigma on the [0, 255] scale, in the order of fs.
func (fs Fields[O]) Resolve(o O, sigma float64) O {
	for _, f := range fs {
		if f.resolve != nil {
			f.resolve(&o, sigma)
		}
	}
	return o
}

// Check returns the *option.Error of the first setting of o (resolved)
// that breaks its rule, in the order of fs, or nil.
func (fs Fields[O]) Check(o *O) error {
	for _, f := range fs {
		if err := f.check(o); err != nil {
			return err
		}
	}
	return nil
}

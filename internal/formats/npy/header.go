// The header of a .npy file, as np.save writes it and np.load reads it.
//
// A .npy file is a magic string ("\x93NUMPY"), a format version (1.0, 2.0 or
// 3.0), the length of a header (two bytes little-endian in version 1, four
// in versions 2 and 3), the header itself and then the array's raw values.
// The header is a Python dict literal with three keys:
//
//	{'descr': '<f4', 'fortran_order': False, 'shape': (4, 5, 3), }
//
// descr is the element type: a byte-order character ('<' little-endian,
// '>' big-endian, '|' not applicable for one-byte types), a kind ('f'
// float, 'u' unsigned integer, 'i' signed integer) and the size in bytes.
// shape lists the dimensions. fortran_order says how the values are laid
// out: False is C (row-major) order, where the last index varies fastest;
// True is Fortran (column-major) order, where the first varies fastest. The
// header is padded with spaces and ended with a newline so that the data
// starts at a multiple of 64 bytes.
//
// This file parses and formats the header only; npy.go reads and writes
// the values that follow, whose layout the header describes. The parser
// takes the subset of Python literal syntax that NumPy writes (and older
// NumPy versions wrote: "L" suffixes on integers, double quotes) and
// refuses anything else with an error that says what was wrong.

package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"tdsc/internal/formats/array"
)

// magic is the string every .npy file starts with.
const magic = "\x93NUMPY"

// maxHeaderLen bounds the header length accepted on reading. NumPy itself
// refuses headers over 10 000 bytes unless told otherwise; a cube's header
// is under 128.
const maxHeaderLen = 1 << 16

// kind is the kind of an element type.
type kind byte

// The element kinds this package reads and writes: descr's kind
// character.
const (
	kindFloat    kind = 'f'
	kindUnsigned kind = 'u'
	kindSigned   kind = 'i'
)

// header is the parsed header of a .npy file.
type header struct {
	// Kind and Size (in bytes) are the element type.
	Kind kind
	Size int
	// BigEndian is set when the values are stored most significant byte
	// first ('>' in descr). It is false for one-byte types.
	BigEndian bool
	// Fortran is set for column-major (Fortran) order, unset for
	// row-major (C) order.
	Fortran bool
	// Shape lists the dimensions.
	Shape []int
	// DataOffset is the number of bytes before the values: magic,
	// version, header length and header. Set by readHeader; ignored by
	// writeHeader.
	DataOffset int
}

// Descr returns the header's element type in NumPy's spelling, such as
// "<f4" or "|u1".
func (h header) Descr() string {
	order := byte('<')
	switch {
	case h.Size == 1:
		order = '|'
	case h.BigEndian:
		order = '>'
	}
	return fmt.Sprintf("%c%c%d", order, h.Kind, h.Size)
}

// Order returns the byte order of the values.
func (h header) Order() binary.ByteOrder {
	if h.BigEndian {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// Values returns the number of values the shape holds and whether that
// number, and its size in bytes, fit in an int.
func (h header) Values() (int, bool) {
	n := 1
	for _, d := range h.Shape {
		if d < 0 || d != 0 && n > math.MaxInt/d {
			return 0, false
		}
		n *= d
	}
	if h.Size > 0 && n > math.MaxInt/h.Size {
		return 0, false
	}
	return n, true
}

// readHeader reads the magic, version, header length and header from r and
// parses the header. Errors say what is wrong without naming a file; the
// caller adds the name.
func readHeader(r io.Reader) (header, error) {
	var pre [10]byte
	n, _ := io.ReadFull(r, pre[:8])
	if n == 0 {
		return header{}, errors.New("empty file: not a .npy file")
	}
	if !strings.HasPrefix(string(pre[:n]), magic) && !strings.HasPrefix(magic, string(pre[:n])) {
		return header{}, errors.New(`not a .npy file: it does not start with "\x93NUMPY"`)
	}
	if n < 8 {
		return header{}, fmt.Errorf("truncated: %d bytes, too short for a .npy header", n)
	}
	major, minor := pre[6], pre[7]
	var headerLen, offset int
	switch major {
	case 1:
		if _, err := io.ReadFull(r, pre[8:10]); err != nil {
			return header{}, errors.New("truncated in the header length")
		}
		headerLen, offset = int(binary.LittleEndian.Uint16(pre[8:10])), 10
	case 2, 3:
		var n [4]byte
		if _, err := io.ReadFull(r, n[:]); err != nil {
			return header{}, errors.New("truncated in the header length")
		}
		l := binary.LittleEndian.Uint32(n[:])
		if l > maxHeaderLen {
			return header{}, fmt.Errorf("header length %d is implausibly large (over %d bytes)", l, maxHeaderLen)
		}
		headerLen, offset = int(l), 12
	default:
		return header{}, fmt.Errorf("unsupported .npy format version %d.%d (supported: 1.0, 2.0, 3.0)", major, minor)
	}
	text := make([]byte, headerLen)
	if n, err := io.ReadFull(r, text); err != nil {
		return header{}, fmt.Errorf("truncated: the header says it is %d bytes, only %d follow", headerLen, n)
	}
	h, err := parseHeader(text)
	if err != nil {
		return header{}, err
	}
	h.DataOffset = offset + headerLen
	return h, nil
}

// parseHeader parses the dict literal of a .npy header (the text after the
// header length, padding and final newline included).
func parseHeader(text []byte) (header, error) {
	p := &parser{s: string(bytes.TrimRight(text, " \t\r\n\x00"))}
	fields, err := p.dict()
	if err != nil {
		return header{}, fmt.Errorf("bad header %q: %v", clip(p.s), err)
	}
	var h header
	descr, ok := fields["descr"]
	if !ok {
		return header{}, errors.New("header has no 'descr'")
	}
	ds, ok := descr.(string)
	if !ok {
		return header{}, errors.New("'descr' is not a string: structured arrays are not supported")
	}
	if err := h.setDescr(ds); err != nil {
		return header{}, err
	}
	fo, ok := fields["fortran_order"]
	if !ok {
		return header{}, errors.New("header has no 'fortran_order'")
	}
	if h.Fortran, ok = fo.(bool); !ok {
		return header{}, errors.New("'fortran_order' is not True or False")
	}
	shape, ok := fields["shape"]
	if !ok {
		return header{}, errors.New("header has no 'shape'")
	}
	if h.Shape, ok = shape.([]int); !ok {
		return header{}, errors.New("'shape' is not a tuple of whole numbers")
	}
	for k := range fields {
		if k != "descr" && k != "fortran_order" && k != "shape" {
			return header{}, fmt.Errorf("unexpected header key %q", clip(k))
		}
	}
	if _, ok := h.Values(); !ok {
		return header{}, fmt.Errorf("shape %v is too large", h.Shape)
	}
	return h, nil
}

// setDescr parses a descr string into the element type: a byte order,
// a kind and a size in bytes, any real numeric type of array.TypeOf.
// Booleans ('b1', NumPy's bool) and complex numbers ('c8', 'c16') are
// refused by name, anything else as unsupported.
func (h *header) setDescr(d string) error {
	if len(d) < 3 {
		return unsupportedDescr(d)
	}
	size, err := strconv.Atoi(d[2:])
	if err != nil || size < 1 || size > 64 {
		return unsupportedDescr(d)
	}
	h.Kind, h.Size = kind(d[1]), size
	switch {
	case h.Kind == 'b' && size == 1:
		return fmt.Errorf("element type %q is bool (true/false), not numbers: a cube needs a numeric type (%s)", d, array.ReadTypes)
	case h.Kind == 'c':
		return fmt.Errorf("element type %q is complex (complex%d): a cube must be real", clip(d), 8*size)
	}
	if _, ok := array.TypeOf(byte(h.Kind), size); !ok {
		return unsupportedDescr(d)
	}
	switch d[0] {
	case '<':
	case '>':
		h.BigEndian = h.Size > 1
	case '|':
		if h.Size != 1 {
			return fmt.Errorf("element type %q: '|' (no byte order) is only for one-byte types", d)
		}
	default:
		return fmt.Errorf("element type %q: byte order %q is not '<', '>' or '|'", d, d[0])
	}
	return nil
}

// unsupportedDescr says that descr d is not an element type that is read.
func unsupportedDescr(d string) error {
	return fmt.Errorf("unsupported element type %q (supported: %s, such as <f4 or |u1, either byte order)", clip(d), array.ReadTypes)
}

// writeHeader writes magic, version, header length and header for h to w,
// padded so that the values start at a multiple of 64 bytes. It uses
// format version 1.0, or 2.0 when the header needs more than 65535 bytes.
// It returns the number of bytes written.
func writeHeader(w io.Writer, h header) (int, error) {
	var dict strings.Builder
	parts := make([]string, len(h.Shape))
	for i, d := range h.Shape {
		parts[i] = strconv.Itoa(d)
	}
	shape := strings.Join(parts, ", ")
	if len(h.Shape) == 1 {
		shape += "," // a Python one-tuple keeps its comma
	}
	fortran := "False"
	if h.Fortran {
		fortran = "True"
	}
	fmt.Fprintf(&dict, "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }", h.Descr(), fortran, shape)
	pre := 10
	if dict.Len()+1+pre > 65535 {
		pre = 12
	}
	total := pre + dict.Len() + 1
	pad := (64 - total%64) % 64
	text := dict.String() + strings.Repeat(" ", pad) + "\n"
	var buf []byte
	buf = append(buf, magic...)
	if pre == 10 {
		buf = append(buf, 1, 0)
		buf = binary.LittleEndian.AppendUint16(buf, uint16(len(text)))
	} else {
		buf = append(buf, 2, 0)
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(text)))
	}
	buf = append(buf, text...)
	return w.Write(buf)
}

// parser reads the Python literal subset of a .npy header: a dict with
// string keys whose values are strings, True/False or tuples of integers.
type parser struct {
	s   string
	pos int
}

func (p *parser) space() {
	for p.pos < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.pos]) >= 0 {
		p.pos++
	}
}

// accept skips spaces and then c if it is next, reporting whether it was.
func (p *parser) accept(c byte) bool {
	p.space()
	if p.pos < len(p.s) && p.s[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("at offset %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *parser) dict() (map[string]any, error) {
	if !p.accept('{') {
		return nil, p.errorf("want '{'")
	}
	fields := map[string]any{}
	for !p.accept('}') {
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if _, dup := fields[key]; dup {
			return nil, p.errorf("key %q appears twice", clip(key))
		}
		if !p.accept(':') {
			return nil, p.errorf("want ':' after key %q", clip(key))
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		fields[key] = v
		if !p.accept(',') {
			if !p.accept('}') {
				return nil, p.errorf("want ',' or '}'")
			}
			break
		}
	}
	p.space()
	if p.pos != len(p.s) {
		return nil, p.errorf("text after the closing '}'")
	}
	return fields, nil
}

func (p *parser) value() (any, error) {
	p.space()
	switch {
	case p.pos < len(p.s) && (p.s[p.pos] == '\'' || p.s[p.pos] == '"'):
		return p.str()
	case strings.HasPrefix(p.s[p.pos:], "True"):
		p.pos += 4
		return true, nil
	case strings.HasPrefix(p.s[p.pos:], "False"):
		p.pos += 5
		return false, nil
	case p.accept('('):
		var dims []int
		for !p.accept(')') {
			d, err := p.integer()
			if err != nil {
				return nil, err
			}
			dims = append(dims, d)
			if !p.accept(',') {
				if !p.accept(')') {
					return nil, p.errorf("want ',' or ')' in the shape")
				}
				break
			}
		}
		if dims == nil {
			dims = []int{}
		}
		return dims, nil
	case p.accept('['):
		return nil, p.errorf("a list value (structured element types are not supported)")
	}
	return nil, p.errorf("want a string, True, False or a tuple")
}

func (p *parser) str() (string, error) {
	p.space()
	if p.pos >= len(p.s) || p.s[p.pos] != '\'' && p.s[p.pos] != '"' {
		return "", p.errorf("want a quoted string")
	}
	q := p.s[p.pos]
	end := strings.IndexByte(p.s[p.pos+1:], q)
	if end < 0 {
		return "", p.errorf("string never closed")
	}
	s := p.s[p.pos+1 : p.pos+1+end]
	if strings.IndexByte(s, '\\') >= 0 {
		return "", p.errorf("escapes in strings are not supported")
	}
	p.pos += end + 2
	return s, nil
}

func (p *parser) integer() (int, error) {
	p.space()
	start := p.pos
	for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
		p.pos++
	}
	if start == p.pos {
		return 0, p.errorf("want a non-negative whole number in the shape")
	}
	n, err := strconv.Atoi(p.s[start:p.pos])
	if err != nil {
		return 0, p.errorf("dimension %s is too large", clip(p.s[start:p.pos]))
	}
	if p.pos < len(p.s) && (p.s[p.pos] == 'L' || p.s[p.pos] == 'l') {
		p.pos++ // Python 2 long literal
	}
	return n, nil
}

// clip shortens s for an error message.
func clip(s string) string {
	const n = 60
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

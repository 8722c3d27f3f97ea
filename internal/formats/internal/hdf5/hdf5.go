// Package hdf5 reads the numeric datasets of HDF5 files: the part of the
// format that h5py, MATLAB (v7.3 MAT-files, which are HDF5 files behind a
// 512-byte header) and the HDF5 library with its default settings write
// for plain numeric arrays, in nested groups:
//
//   - superblock versions 0 to 3, at any offset (all addresses are relative
//     to the superblock's base address), with 8-byte offsets and lengths;
//   - groups as symbol tables (version-1 B-tree of group nodes, symbol
//     table nodes and a local heap, as written by default) or as compact
//     link messages;
//   - object headers of version 1 and 2, with continuation blocks;
//   - datasets of fixed-point or IEEE floating-point elements (half,
//     single or double precision) of either byte order, stored compact,
//     contiguous or chunked with a version-1 B-tree chunk index (data
//     layout message version 3, or version 4 for compact and contiguous),
//     filtered by deflate, shuffle and fletcher32;
//   - attributes holding fixed-length strings (MATLAB_class, say).
//
// Anything else (dense link storage, the newer chunk indexes of HDF5 1.10,
// other filters) is an error that names what is missing. The whole file
// is held in memory: the reader is a parser of bytes, so that it needs no
// C library (the GDAL build of tdsc reads every HDF5 file through GDAL).
// Reference: The HDF Group, "HDF5 File Format Specification", version 3.0.
//
// Datasets are in C order (the last dimension varies fastest), as h5py's
// shape lists them; Read returns their values little-endian in that order.
package hdf5

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// Signature starts the superblock of an HDF5 file: at offset 0 in a plain
// HDF5 file, at 512 in a MATLAB v7.3 MAT-file.
const Signature = "\x89HDF\r\n\x1a\n"

// ErrUnsupported is wrapped by the errors of parts of HDF5 the reader does
// not read (dense link storage, HDF5 1.10's chunk indexes, other filters,
// newer superblocks), which other readers (the HDF5 library, GDAL) do.
var ErrUnsupported = errors.New("not supported by tdsc's own HDF5 reader")

// undefined is HDF5's "undefined address" (all bits set).
const undefined = math.MaxUint64

// File is an HDF5 file being read.
type File struct {
	data []byte
	base uint64 // absolute offset that addresses are relative to
	// objects keeps the objects read, by address.
	objects map[uint64]*Object
	root    *Object
}

// Dataset is what the reader keeps of a dataset: its shape and element
// type, and enough to read it.
type Dataset struct {
	// Dims are the dimensions in C order, as h5py's shape.
	Dims []uint64
	// ElemSize is the size of an element in bytes, Kind 'f', 'u' or 'i'
	// for a floating-point, unsigned or signed element (0 for other
	// classes), Class the datatype class (ClassFixed, ClassFloat, ...).
	ElemSize  int
	Kind      byte
	Class     int
	bigEndian bool
	layout    int // 0 compact, 1 contiguous, 2 chunked
	compact   []byte
	address   uint64 // contiguous data or chunk B-tree
	size      uint64 // contiguous data size
	chunk     []uint64
	filters   []filter
	// Unsupported, if set, says why the values cannot be read; the
	// dataset can still be listed.
	Unsupported string
}

// The HDF5 datatype classes that Dataset.Class tells apart.
const (
	ClassFixed    = 0
	ClassFloat    = 1
	ClassCompound = 6
	ClassEnum     = 8
)

// filter is one filter of a dataset's pipeline.
type filter struct {
	id     uint16
	name   string
	values []uint32
}

// Object is the content of an object header that the reader uses: a
// dataset or a group, and its attributes.
type Object struct {
	// Dataset is nil for a group.
	Dataset *Dataset
	// Attributes maps the name of every attribute to its value when that
	// is a fixed-length string, and to "" otherwise.
	Attributes map[string]string
	// Members of a group stored in the header (link messages), and the
	// symbol table of one stored the old way.
	links             map[string]uint64
	btree, heap       uint64
	symbolTable       bool
	hasLayout, hasDTy bool
	hasSpace          bool
	denseLinks        bool
}

// Group reports whether o is a group rather than a dataset.
func (o *Object) Group() bool { return o.Dataset == nil }

// block is a block of object header messages.
type block struct{ addr, size uint64 }

// Member is a named member of a group.
type Member struct {
	Name string
	addr uint64
}

// Find returns the offset of the superblock of the HDF5 file held in data:
// 0, or 512, 1024, 2048, … behind a user block (MATLAB's v7.3 header).
func Find(data []byte) (uint64, bool) {
	for at := 0; at+len(Signature) <= len(data); at = max(2*at, 512) {
		if string(data[at:at+len(Signature)]) == Signature {
			return uint64(at), true
		}
	}
	return 0, false
}

// Parse reads the superblock of the HDF5 file held in data, at offset at
// (0 for a plain HDF5 file, 512 for a MATLAB v7.3 MAT-file), and its root
// group.
func Parse(data []byte, at uint64) (*File, error) {
	if at > uint64(len(data)) || !strings.HasPrefix(string(data[at:]), Signature) {
		return nil, fmt.Errorf("no HDF5 signature at offset %d", at)
	}
	f := &File{data: data, objects: map[uint64]*Object{}}
	c := &cursor{b: data, pos: int(at) + len(Signature)}
	version := c.u8()
	var rootAddr uint64
	var rootBtree, rootHeap uint64
	rootCached := false
	switch version {
	case 0, 1:
		c.skip(4) // free-space, root group and shared header versions, reserved
		offs, lens := c.u8(), c.u8()
		if c.err == nil && (offs != 8 || lens != 8) {
			return nil, fmt.Errorf("HDF5 offsets of %d bytes and lengths of %d: only 8 and 8 are supported", offs, lens)
		}
		c.skip(1 + 2 + 2 + 4) // reserved, group K values, consistency flags
		if version == 1 {
			c.skip(4)
		}
		f.base = c.u64()
		c.skip(8 * 3) // free space, end of file and driver information addresses
		c.skip(8)     // root entry: link name offset
		rootAddr = c.u64()
		if c.u32() == 1 {
			c.skip(4)
			rootBtree, rootHeap, rootCached = c.u64(), c.u64(), true
		}
	case 2, 3:
		offs, lens := c.u8(), c.u8()
		if c.err == nil && (offs != 8 || lens != 8) {
			return nil, fmt.Errorf("HDF5 offsets of %d bytes and lengths of %d: only 8 and 8 are supported", offs, lens)
		}
		c.skip(1)
		f.base = c.u64()
		c.skip(8 + 8) // superblock extension and end of file addresses
		rootAddr = c.u64()
	default:
		return nil, fmt.Errorf("HDF5 superblock version %d: %w", version, ErrUnsupported)
	}
	if c.err != nil {
		return nil, fmt.Errorf("HDF5 superblock: %v", c.err)
	}
	if f.base != at && f.base != 0 {
		return nil, fmt.Errorf("HDF5 base address %#x: want %#x", f.base, at)
	}
	f.base = at
	if rootCached {
		f.root = &Object{symbolTable: true, btree: rootBtree, heap: rootHeap}
		return f, nil
	}
	root, err := f.object(rootAddr)
	if err != nil {
		return nil, fmt.Errorf("root group: %v", err)
	}
	if !root.Group() {
		return nil, errors.New("the root object is a dataset, not a group")
	}
	f.root = root
	return f, nil
}

// Root returns the root group.
func (f *File) Root() *Object { return f.root }

// Object reads the object header of member m. Each object is read once: a
// second read of the same header is an error, as the file would then have
// a cycle.
func (f *File) Object(m Member) (*Object, error) { return f.object(m.addr) }

// Members lists the members of group g, sorted by name for links (the
// order of the symbol table, which is by name, otherwise).
func (f *File) Members(g *Object) ([]Member, error) {
	switch {
	case g.symbolTable:
		return f.symbolTable(g.btree, g.heap)
	case g.denseLinks:
		return nil, fmt.Errorf("the group keeps its members in dense link storage (a fractal heap): %w", ErrUnsupported)
	}
	var ms []Member
	for name, a := range g.links {
		ms = append(ms, Member{name, a})
	}
	// Map order is random; sort by name so that listings are stable.
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && ms[j].Name < ms[j-1].Name; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
	return ms, nil
}

// NotFoundError reports a path that names no object of the file.
type NotFoundError struct {
	// Path is the path looked up, Missing the member not found and Group
	// the group that lacks it ("/" for the root).
	Path, Missing, Group string
	// Members lists the group's members.
	Members []string
}

func (e *NotFoundError) Error() string {
	have := "it is empty"
	if len(e.Members) > 0 {
		have = "it holds " + strings.Join(e.Members, ", ")
	}
	return fmt.Sprintf("no %q in group %s (%s)", e.Missing, e.Group, have)
}

// Lookup returns the object at path, names of nested groups separated by
// "/" ("/HDFEOS/SWATHS/cube" or "HDFEOS/SWATHS/cube"; "/" is the root). A
// path that names nothing is a *NotFoundError; one that passes through a
// dataset is an error saying so.
func (f *File) Lookup(path string) (*Object, error) {
	o, group := f.root, "/"
	for _, name := range strings.Split(strings.Trim(path, "/"), "/") {
		if name == "" {
			continue
		}
		if !o.Group() {
			return nil, fmt.Errorf("%s is a dataset, not a group", group)
		}
		ms, err := f.Members(o)
		if err != nil {
			return nil, fmt.Errorf("group %s: %v", group, err)
		}
		next := strings.TrimSuffix(group, "/") + "/" + name
		var found *Member
		names := make([]string, len(ms))
		for i := range ms {
			names[i] = ms[i].Name
			if ms[i].Name == name {
				found = &ms[i]
			}
		}
		if found == nil {
			return nil, &NotFoundError{Path: path, Missing: name, Group: group, Members: names}
		}
		if o, err = f.Object(*found); err != nil {
			return nil, fmt.Errorf("%s: %v", next, err)
		}
		group = next
	}
	return o, nil
}

// cursor reads little-endian fields from a byte slice; reading past its end
// sets err (and returns zeros) rather than panicking.
type cursor struct {
	b   []byte
	pos int
	err error
}

func (c *cursor) take(n int) []byte {
	if c.err != nil {
		return nil
	}
	if n < 0 || n > len(c.b)-c.pos {
		c.err = errors.New("truncated HDF5 structure")
		return nil
	}
	p := c.b[c.pos : c.pos+n]
	c.pos += n
	return p
}

func (c *cursor) u8() uint8 {
	if p := c.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (c *cursor) u16() uint16 {
	if p := c.take(2); p != nil {
		return binary.LittleEndian.Uint16(p)
	}
	return 0
}

func (c *cursor) u32() uint32 {
	if p := c.take(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (c *cursor) u64() uint64 {
	if p := c.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

func (c *cursor) skip(n int) { c.take(n) }

// at returns the bytes of the file from address a (relative to the base)
// to the end of the file.
func (f *File) at(a uint64) ([]byte, error) {
	if a == undefined || a > uint64(len(f.data)) || f.base+a > uint64(len(f.data)) {
		return nil, fmt.Errorf("HDF5 address %#x is outside the file (%d bytes): it is truncated or corrupt", a, len(f.data))
	}
	return f.data[f.base+a:], nil
}

// cursorAt returns a cursor at address a.
func (f *File) cursorAt(a uint64) (*cursor, error) {
	b, err := f.at(a)
	if err != nil {
		return nil, err
	}
	return &cursor{b: b}, nil
}

// visited holds the addresses of the structures one walk (of a group's
// B-tree, of an object header's blocks) has read, to guard against cycles.
type visited map[uint64]bool

// visit reports an error if address a was visited before (a cycle, or a
// structure shared where none may be).
func (v visited) visit(a uint64, what string) error {
	if v[a] {
		return fmt.Errorf("HDF5 %s at %#x is reached twice: the file is corrupt", what, a)
	}
	v[a] = true
	return nil
}

// maxMembers bounds the members of a group read.
const maxMembers = 1 << 16

// symbolTable lists a group stored the old way: a version-1 B-tree of group
// nodes whose leaves point to symbol table nodes, names in a local heap.
func (f *File) symbolTable(btree, heap uint64) ([]Member, error) {
	hc, err := f.cursorAt(heap)
	if err != nil {
		return nil, fmt.Errorf("group's local heap: %v", err)
	}
	if string(hc.take(4)) != "HEAP" {
		return nil, errors.New("group's local heap has no HEAP signature")
	}
	hc.skip(4)
	heapSize := hc.u64()
	hc.skip(8)
	heapData := hc.u64()
	if hc.err != nil {
		return nil, fmt.Errorf("group's local heap: %v", hc.err)
	}
	names, err := f.at(heapData)
	if err != nil {
		return nil, fmt.Errorf("group's local heap data: %v", err)
	}
	if heapSize < uint64(len(names)) {
		names = names[:heapSize]
	}
	var members []Member
	seen := visited{}
	var walk func(addr uint64, depth int) error
	walk = func(addr uint64, depth int) error {
		if depth > 32 {
			return errors.New("group B-tree is too deep")
		}
		if err := seen.visit(addr, "group B-tree node"); err != nil {
			return err
		}
		c, err := f.cursorAt(addr)
		if err != nil {
			return err
		}
		if string(c.take(4)) != "TREE" || c.u8() != 0 {
			return fmt.Errorf("group B-tree node at %#x: bad signature or type", addr)
		}
		level := c.u8()
		entries := int(c.u16())
		c.skip(16) // siblings
		for range entries {
			c.skip(8) // key: heap offset
			child := c.u64()
			if c.err != nil {
				return fmt.Errorf("group B-tree node at %#x: %v", addr, c.err)
			}
			if level > 0 {
				if err := walk(child, depth+1); err != nil {
					return err
				}
				continue
			}
			if err := seen.visit(child, "symbol table node"); err != nil {
				return err
			}
			s, err := f.cursorAt(child)
			if err != nil {
				return err
			}
			if string(s.take(4)) != "SNOD" {
				return fmt.Errorf("symbol table node at %#x has no SNOD signature", child)
			}
			s.skip(2)
			n := int(s.u16())
			for range n {
				nameOff := s.u64()
				obj := s.u64()
				s.skip(4 + 4 + 16)
				if s.err != nil {
					return fmt.Errorf("symbol table node at %#x: %v", child, s.err)
				}
				if nameOff >= uint64(len(names)) {
					return fmt.Errorf("member name offset %d is outside the group's heap", nameOff)
				}
				name := names[nameOff:]
				if i := bytes.IndexByte(name, 0); i >= 0 {
					name = name[:i]
				}
				members = append(members, Member{string(name), obj})
				if len(members) > maxMembers {
					return errors.New("group has too many members")
				}
			}
		}
		return c.err
	}
	if err := walk(btree, 0); err != nil {
		return nil, err
	}
	return members, nil
}

// maxObjects bounds the object headers read from one file.
const maxObjects = 1 << 16

// object returns the object whose header is at addr, read once and kept.
// An object with no data layout is a group (its Dataset nil); a dataset
// must have a datatype and a dataspace.
func (f *File) object(addr uint64) (*Object, error) {
	if o, ok := f.objects[addr]; ok {
		return o, nil
	}
	if len(f.objects) >= maxObjects {
		return nil, errors.New("too many objects")
	}
	o, err := f.readObject(addr)
	if err != nil {
		return nil, err
	}
	if !o.hasLayout {
		o.Dataset = nil
	} else if !o.hasDTy || !o.hasSpace {
		return nil, errors.New("dataset without a datatype or dataspace")
	}
	f.objects[addr] = o
	return o, nil
}

// readObject reads the object header at addr and the messages the reader
// uses.
func (f *File) readObject(addr uint64) (*Object, error) {
	seen := visited{addr: true}
	c, err := f.cursorAt(addr)
	if err != nil {
		return nil, err
	}
	o := &Object{Attributes: map[string]string{}}
	var blocks []block
	if len(c.b) >= 4 && string(c.b[:4]) == "OHDR" {
		c.skip(4)
		if v := c.u8(); v != 2 {
			return nil, fmt.Errorf("object header version %d", v)
		}
		flags := c.u8()
		if flags&0x20 != 0 {
			c.skip(16)
		}
		if flags&0x10 != 0 {
			c.skip(4)
		}
		var size uint64
		switch flags & 3 {
		case 0:
			size = uint64(c.u8())
		case 1:
			size = uint64(c.u16())
		case 2:
			size = uint64(c.u32())
		case 3:
			size = c.u64()
		}
		if c.err != nil || size > uint64(len(c.b)-c.pos) {
			return nil, fmt.Errorf("object header at %#x is truncated", addr)
		}
		if err := o.messagesV2(f, c.b[c.pos:c.pos+int(size)], flags, &blocks, seen); err != nil {
			return nil, err
		}
		for i := 0; i < len(blocks); i++ {
			if i > 64 {
				return nil, errors.New("too many object header continuation blocks")
			}
			b, err := f.at(blocks[i].addr)
			if err != nil || blocks[i].size > uint64(len(b)) || blocks[i].size < 8 || string(b[:4]) != "OCHK" {
				return nil, fmt.Errorf("bad object header continuation block at %#x", blocks[i].addr)
			}
			if err := o.messagesV2(f, b[4:blocks[i].size-4], flags, &blocks, seen); err != nil {
				return nil, err
			}
		}
		return o, nil
	}
	if v := c.u8(); v != 1 {
		return nil, fmt.Errorf("object header at %#x: version %d is not supported", addr, v)
	}
	c.skip(1)
	c.skip(2) // number of messages: the blocks' sizes bound the reading
	c.skip(4) // reference count
	size := uint64(c.u32())
	c.skip(4) // padding to 8
	if c.err != nil || size > uint64(len(c.b)-c.pos) {
		return nil, fmt.Errorf("object header at %#x is truncated", addr)
	}
	blocks = append(blocks, block{addr + 16, size})
	for i := 0; i < len(blocks); i++ {
		if i > 64 {
			return nil, errors.New("too many object header continuation blocks")
		}
		b, err := f.at(blocks[i].addr)
		if err != nil || blocks[i].size > uint64(len(b)) {
			return nil, fmt.Errorf("object header block at %#x is outside the file", blocks[i].addr)
		}
		m := &cursor{b: b[:blocks[i].size]}
		for m.err == nil && len(m.b)-m.pos >= 8 {
			typ, n := m.u16(), int(m.u16())
			m.skip(4)
			body := m.take(n)
			if m.err != nil {
				return nil, fmt.Errorf("object header at %#x: message of %d bytes overruns its block", addr, n)
			}
			if typ == 0x10 {
				cc := &cursor{b: body}
				a, s := cc.u64(), cc.u64()
				if cc.err != nil {
					return nil, errors.New("bad object header continuation message")
				}
				if err := seen.visit(a, "object header block"); err != nil {
					return nil, err
				}
				blocks = append(blocks, block{a, s})
				continue
			}
			if err := o.message(f, typ, body); err != nil {
				return nil, err
			}
		}
	}
	return o, nil
}

// messagesV2 reads the messages of a version-2 object header chunk,
// queueing continuation blocks.
func (o *Object) messagesV2(f *File, b []byte, flags uint8, blocks *[]block, seen visited) error {
	m := &cursor{b: b}
	head := 4
	if flags&0x04 != 0 {
		head = 6
	}
	for m.err == nil && len(m.b)-m.pos >= head {
		typ := uint16(m.u8())
		n := int(m.u16())
		m.skip(head - 3)
		body := m.take(n)
		if m.err != nil {
			return errors.New("object header message overruns its chunk")
		}
		if typ == 0x10 {
			cc := &cursor{b: body}
			a, s := cc.u64(), cc.u64()
			if cc.err != nil {
				return errors.New("bad object header continuation message")
			}
			if err := seen.visit(a, "object header block"); err != nil {
				return err
			}
			*blocks = append(*blocks, block{a, s})
			continue
		}
		if err := o.message(f, typ, body); err != nil {
			return err
		}
	}
	return nil
}

// message records what the reader needs of one header message.
func (o *Object) message(f *File, typ uint16, body []byte) error {
	c := &cursor{b: body}
	d := o.Dataset
	if d == nil && (typ == 0x1 || typ == 0x3 || typ == 0x8 || typ == 0xB) {
		d = &Dataset{}
		o.Dataset = d
	}
	switch typ {
	case 0x1: // dataspace
		o.hasSpace = true
		version := c.u8()
		rank := int(c.u8())
		c.skip(1) // flags: the maximum dimensions that may follow are not needed
		switch version {
		case 1:
			c.skip(5)
		case 2:
			if t := c.u8(); t != 1 { // scalar or null: not an array
				rank = 0
			}
		default:
			return fmt.Errorf("dataspace message version %d is not supported", version)
		}
		if rank > 32 {
			return fmt.Errorf("dataspace of rank %d", rank)
		}
		d.Dims = make([]uint64, rank)
		for i := range d.Dims {
			d.Dims[i] = c.u64()
		}
	case 0x3: // datatype
		o.hasDTy = true
		cv := c.u8()
		bits := c.take(3)
		d.ElemSize = int(c.u32())
		d.Class = int(cv & 0x0f)
		if c.err != nil {
			break
		}
		switch d.Class {
		case 0: // fixed-point
			d.Kind = 'u'
			if bits[0]&0x08 != 0 {
				d.Kind = 'i'
			}
			d.bigEndian = bits[0]&0x01 != 0
		case 1: // floating-point
			if bits[0]&0x40 != 0 {
				return errors.New("VAX floating-point data is not supported")
			}
			d.Kind = 'f'
			d.bigEndian = bits[0]&0x01 != 0
		}
	case 0x8: // data layout
		o.hasLayout = true
		version := c.u8()
		if version != 3 && version != 4 {
			d.Unsupported = fmt.Sprintf("data layout message version %d is not supported", version)
			return nil
		}
		d.layout = int(c.u8())
		switch d.layout {
		case 0:
			n := int(c.u16())
			d.compact = c.take(n)
		case 1:
			d.address, d.size = c.u64(), c.u64()
		case 2:
			if version == 4 {
				d.Unsupported = "chunked data with an HDF5 1.10 chunk index (data layout version 4) is not supported"
				return nil
			}
			rank := int(c.u8())
			d.address = c.u64()
			if rank < 1 || rank > 33 {
				return fmt.Errorf("chunk rank %d", rank)
			}
			d.chunk = make([]uint64, rank)
			for i := range d.chunk {
				d.chunk[i] = uint64(c.u32())
			}
		default:
			d.Unsupported = fmt.Sprintf("data layout class %d is not supported", d.layout)
			return nil
		}
	case 0xB: // filter pipeline
		version := c.u8()
		n := int(c.u8())
		if version == 1 {
			c.skip(6)
		}
		for range n {
			var fl filter
			fl.id = c.u16()
			nameLen := 0
			if version == 1 || fl.id >= 256 {
				nameLen = int(c.u16())
			}
			c.skip(2) // flags
			nv := int(c.u16())
			if version == 1 {
				nameLen = (nameLen + 7) &^ 7
			}
			fl.name = strings.TrimRight(string(c.take(nameLen)), "\x00")
			for range nv {
				fl.values = append(fl.values, c.u32())
			}
			if version == 1 && nv%2 == 1 {
				c.skip(4)
			}
			d.filters = append(d.filters, fl)
		}
	case 0xC: // attribute
		version := c.u8()
		c.skip(1)
		nameSize, typeSize, spaceSize := int(c.u16()), int(c.u16()), int(c.u16())
		if version == 3 {
			c.skip(1)
		}
		pad := func(n int) int {
			if version == 1 {
				return (n + 7) &^ 7
			}
			return n
		}
		name := strings.TrimRight(string(c.take(pad(nameSize))), "\x00")
		dt := c.take(pad(typeSize))
		c.skip(pad(spaceSize))
		if c.err != nil || len(dt) < 8 {
			break
		}
		value := ""
		if dt[0]&0x0f == 3 { // fixed-length string
			size := int(binary.LittleEndian.Uint32(dt[4:8]))
			value = strings.TrimRight(string(c.take(min(size, len(c.b)-c.pos))), "\x00 ")
		}
		if len(o.Attributes) < maxMembers {
			o.Attributes[name] = value
		}
		return nil // the value of an attribute that is not a string is not needed
	case 0x11: // symbol table
		o.symbolTable = true
		o.btree, o.heap = c.u64(), c.u64()
	case 0x6: // link
		if o.links == nil {
			o.links = map[string]uint64{}
		}
		c.skip(1) // version
		flags := c.u8()
		ltype := uint8(0)
		if flags&0x08 != 0 {
			ltype = c.u8()
		}
		if flags&0x04 != 0 {
			c.skip(8)
		}
		if flags&0x10 != 0 {
			c.skip(1)
		}
		var n int
		switch flags & 3 {
		case 0:
			n = int(c.u8())
		case 1:
			n = int(c.u16())
		case 2:
			n = int(c.u32())
		default:
			n = int(c.u64() & 0xffff)
		}
		name := string(c.take(n))
		a := c.u64()
		if c.err == nil && ltype == 0 && len(o.links) < maxMembers {
			o.links[name] = a
		}
	case 0x2: // link info: members in a fractal heap unless its address is undefined
		c.skip(1)
		flags := c.u8()
		if flags&1 != 0 {
			c.skip(8)
		}
		if heap := c.u64(); c.err == nil && heap != undefined {
			o.denseLinks = true
		}
	}
	if c.err != nil {
		return fmt.Errorf("header message %#x: %v", typ, c.err)
	}
	return nil
}

// maxExpansion bounds how much larger than the file a dataset may be:
// deflate cannot compress by more than about 1032:1, so a dataset larger
// than that is not backed by the file.
const maxExpansion = 1100

// Count returns the number of elements of d, and false when it exceeds
// what Read reads (2³¹ − 1 elements).
func (d *Dataset) Count() (uint64, bool) {
	count := uint64(1)
	for _, x := range d.Dims {
		if x != 0 && count > math.MaxInt32/x {
			return 0, false
		}
		count *= x
	}
	return count, true
}

// Read returns the values of dataset d of f: little-endian, in C order.
// Only datasets of plain numbers (Kind not 0) can be read.
func (f *File) Read(d *Dataset) ([]byte, error) {
	if d.Kind == 0 {
		return nil, fmt.Errorf("HDF5 elements of %d bytes (datatype class %d) that are not plain numbers", d.ElemSize, d.Class)
	}
	if d.Unsupported != "" {
		return nil, fmt.Errorf("%s: %w", d.Unsupported, ErrUnsupported)
	}
	count, ok := d.Count()
	if !ok {
		return nil, fmt.Errorf("a dataset of shape %v is too large", d.Dims)
	}
	total := count * uint64(d.ElemSize)
	if total > uint64(len(f.data))*maxExpansion+1<<20 {
		return nil, fmt.Errorf("%d bytes of data cannot come from a %d-byte file", total, len(f.data))
	}
	var out []byte
	switch d.layout {
	case 0:
		if uint64(len(d.compact)) != total {
			return nil, fmt.Errorf("%d bytes of compact data, want %d", len(d.compact), total)
		}
		out = bytes.Clone(d.compact)
	case 1:
		if d.address == undefined {
			return nil, errors.New("the dataset was never written")
		}
		if d.size != total {
			return nil, fmt.Errorf("%d bytes of contiguous data, want %d", d.size, total)
		}
		b, err := f.at(d.address)
		if err != nil || uint64(len(b)) < total {
			return nil, errors.New("truncated: its data runs past the end of the file")
		}
		out = bytes.Clone(b[:total])
	case 2:
		var err error
		if out, err = f.chunked(d, total); err != nil {
			return nil, err
		}
	}
	if d.bigEndian {
		swapBytes(out, d.ElemSize)
	}
	return out, nil
}

// swapBytes reverses the bytes of every size-byte element of b.
func swapBytes(b []byte, size int) {
	for i := 0; i+size <= len(b); i += size {
		for j, k := i, i+size-1; j < k; j, k = j+1, k-1 {
			b[j], b[k] = b[k], b[j]
		}
	}
}

// chunked assembles a chunked dataset of total bytes from the chunks its
// version-1 B-tree lists.
func (f *File) chunked(d *Dataset, total uint64) ([]byte, error) {
	rank := len(d.Dims)
	if len(d.chunk) != rank+1 || uint64(d.ElemSize) != d.chunk[rank] {
		return nil, fmt.Errorf("chunk dimensions %v do not match the dataset's %v of %d-byte elements", d.chunk, d.Dims, d.ElemSize)
	}
	chunkBytes := uint64(d.ElemSize)
	for _, x := range d.chunk[:rank] {
		if x == 0 || chunkBytes > math.MaxInt32/x {
			return nil, fmt.Errorf("bad chunk dimensions %v", d.chunk)
		}
		chunkBytes *= x
	}
	out := make([]byte, total)
	seen := map[uint64]bool{}
	var walk func(addr uint64, depth int) error
	walk = func(addr uint64, depth int) error {
		if depth > 32 {
			return errors.New("chunk B-tree is too deep")
		}
		if seen[addr] {
			return errors.New("chunk B-tree node reached twice: the file is corrupt")
		}
		seen[addr] = true
		c, err := f.cursorAt(addr)
		if err != nil {
			return err
		}
		if string(c.take(4)) != "TREE" || c.u8() != 1 {
			return fmt.Errorf("chunk B-tree node at %#x: bad signature or type", addr)
		}
		level := c.u8()
		entries := int(c.u16())
		c.skip(16)
		for range entries {
			size := c.u32()
			mask := c.u32()
			offsets := make([]uint64, rank+1)
			for i := range offsets {
				offsets[i] = c.u64()
			}
			child := c.u64()
			if c.err != nil {
				return fmt.Errorf("chunk B-tree node at %#x: %v", addr, c.err)
			}
			if level > 0 {
				if err := walk(child, depth+1); err != nil {
					return err
				}
				continue
			}
			raw, err := f.at(child)
			if err != nil || uint64(size) > uint64(len(raw)) {
				return fmt.Errorf("chunk at %#x runs past the end of the file", child)
			}
			chunk, err := d.unfilter(raw[:size], mask, chunkBytes)
			if err != nil {
				return fmt.Errorf("chunk at offset %v: %v", offsets[:rank], err)
			}
			if err := d.place(out, chunk, offsets[:rank]); err != nil {
				return err
			}
		}
		return nil
	}
	if d.address == undefined {
		return nil, errors.New("the dataset was never written")
	}
	if err := walk(d.address, 0); err != nil {
		return nil, err
	}
	return out, nil
}

// unfilter undoes the dataset's filters on one chunk (those not masked
// out), in reverse order, and checks that it has want bytes.
func (d *Dataset) unfilter(b []byte, mask uint32, want uint64) ([]byte, error) {
	for i := len(d.filters) - 1; i >= 0; i-- {
		if i < 32 && mask&(1<<i) != 0 {
			continue
		}
		fl := d.filters[i]
		switch fl.id {
		case 1: // deflate
			zr, err := zlib.NewReader(bytes.NewReader(b))
			if err != nil {
				return nil, fmt.Errorf("deflate: %v", err)
			}
			out, err := io.ReadAll(io.LimitReader(zr, int64(want)+1))
			if err != nil {
				return nil, fmt.Errorf("deflate: %v", err)
			}
			b = out
		case 2: // shuffle: byte k of every element stored together
			size := d.ElemSize
			if len(fl.values) > 0 {
				size = int(fl.values[0])
			}
			if size > 1 && len(b)%size == 0 {
				n := len(b) / size
				out := make([]byte, len(b))
				for k := range size {
					for j := range n {
						out[j*size+k] = b[k*n+j]
					}
				}
				b = out
			}
		case 3: // fletcher32: a checksum after the data
			if len(b) < 4 {
				return nil, errors.New("fletcher32: chunk too short")
			}
			b = b[:len(b)-4]
		default:
			name := fl.name
			if name == "" {
				name = fmt.Sprintf("filter %d", fl.id)
			}
			return nil, fmt.Errorf("HDF5 filter %q (%d) (deflate, shuffle and fletcher32 are read): %w", name, fl.id, ErrUnsupported)
		}
	}
	if uint64(len(b)) != want {
		return nil, fmt.Errorf("%d bytes after unfiltering, want %d", len(b), want)
	}
	return b, nil
}

// place copies a chunk whose first element is at offsets into out, the
// whole dataset in C order, leaving out what falls beyond its edges.
func (d *Dataset) place(out, chunk []byte, offsets []uint64) error {
	rank := len(d.Dims)
	for i, o := range offsets {
		if o >= d.Dims[i] || o%d.chunk[i] != 0 {
			return fmt.Errorf("chunk offset %v does not fit the dataset %v", offsets, d.Dims)
		}
	}
	if rank == 0 {
		copy(out, chunk)
		return nil
	}
	es := uint64(d.ElemSize)
	// Copy row by row along the last dimension.
	last := rank - 1
	rowLen := min(d.chunk[last], d.Dims[last]-offsets[last])
	idx := make([]uint64, rank) // position within the chunk, last index 0
	for {
		src, dst := uint64(0), uint64(0)
		for i := range rank {
			src = src*d.chunk[i] + idx[i]
			dst = dst*d.Dims[i] + offsets[i] + idx[i]
		}
		copy(out[dst*es:(dst+rowLen)*es], chunk[src*es:(src+rowLen)*es])
		// Next row: the odometer over all but the last dimension.
		i := last - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < d.chunk[i] && offsets[i]+idx[i] < d.Dims[i] {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return nil
		}
	}
}

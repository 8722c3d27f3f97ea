package matfile

// MATLAB v7.3 MAT-files are HDF5 files whose first 512 bytes (HDF5's "user
// block") hold a MAT-file header; h5py writes the same without the header.
// This file reads the part of HDF5 that MATLAB and h5py write for plain
// numeric arrays:
//
//   - superblock versions 0 to 3, at offset 512 or 0, with 8-byte offsets and
//     lengths (all addresses are relative to the superblock's base
//     address);
//   - the root group as a symbol table (version-1 B-tree of group nodes,
//     symbol table nodes and a local heap, as written by default) or as
//     compact link messages;
//   - object headers of version 1 and 2, with continuation blocks;
//   - datasets of fixed-point or IEEE floating-point elements (half,
//     single or double precision) of either byte order, stored compact, contiguous or chunked with a version-1
//     B-tree chunk index (data layout message version 3, or version 4 for
//     compact and contiguous), filtered by deflate, shuffle and
//     fletcher32;
//   - the MATLAB_class attribute that says the MATLAB class ("double",
//     "logical", "char", ...); without it (h5py), the class follows the
//     element type, an enumeration being h5py's bool (logical) and a
//     compound one of two floats its complex numbers.
//
// Anything else (dense link storage, the newer chunk indexes of HDF5 1.10,
// other filters) is an error that names what is missing and suggests
// re-saving as v7. Reference: The HDF Group, "HDF5 File Format
// Specification", version 3.0.
//
// HDF5 stores arrays in C order, and MATLAB writes its column-major arrays
// as they are, so HDF5 (and h5py) sees MATLAB's dimensions reversed: an
// H×W×B cube is a (B, W, H) dataset. The reader reverses them back, so a
// Var's Dims and Data mean the same as for a level-5 file.

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

// v73Offset is where the HDF5 superblock of a v7.3 MAT-file is.
const v73Offset = 512

// undefined is HDF5's "undefined address" (all bits set).
const undefined = math.MaxUint64

// h5File is an HDF5 file being read.
type h5File struct {
	data []byte
	base uint64 // absolute offset that addresses are relative to
	// visited guards against cycles in the file's trees and headers.
	visited map[uint64]bool
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
func (f *h5File) at(a uint64) ([]byte, error) {
	if a == undefined || a > uint64(len(f.data)) || f.base+a > uint64(len(f.data)) {
		return nil, fmt.Errorf("HDF5 address %#x is outside the file (%d bytes)", a, len(f.data))
	}
	return f.data[f.base+a:], nil
}

// cursorAt returns a cursor at address a.
func (f *h5File) cursorAt(a uint64) (*cursor, error) {
	b, err := f.at(a)
	if err != nil {
		return nil, err
	}
	return &cursor{b: b}, nil
}

// visit reports an error if address a was visited before (a cycle, or a
// structure shared where none may be).
func (f *h5File) visit(a uint64, what string) error {
	if f.visited[a] {
		return fmt.Errorf("HDF5 %s at %#x is reached twice: the file is corrupt", what, a)
	}
	f.visited[a] = true
	return nil
}

// h5Dataset is what the reader keeps of a dataset: enough to read it.
type h5Dataset struct {
	dims      []uint64 // HDF5 order (C order, MATLAB's reversed)
	elemSize  int
	kind      byte // 'f', 'u' or 'i'; 0 for other element classes
	bigEndian bool
	layout    int // 0 compact, 1 contiguous, 2 chunked
	compact   []byte
	address   uint64 // contiguous data or chunk B-tree
	size      uint64 // contiguous data size
	chunk     []uint64
	filters   []h5Filter
	// unsupported, if set, says why the values cannot be read; the
	// variable is still listed.
	unsupported string
}

// h5Filter is one filter of a dataset's pipeline.
type h5Filter struct {
	id     uint16
	name   string
	values []uint32
}

// h5Object is the content of an object header that the reader uses.
type h5Object struct {
	dataset     *h5Dataset // nil for a group
	matlabClass string
	empty       bool
	// Members of a group stored in the header (link messages), and the
	// symbol table of one stored the old way.
	links             map[string]uint64
	btree, heap       uint64
	symbolTable       bool
	hasLayout, hasDTy bool
	dtypeClass        int
	hasSpace          bool
	denseLinks        bool
}

// parseHDF5 reads the variables of a v7.3 MAT-file whose superblock is at
// offset at: 512 behind MATLAB's header, 0 in a plain HDF5 file.
func parseHDF5(data []byte, at uint64) (*File, error) {
	f := &h5File{data: data, visited: map[uint64]bool{}}
	c := &cursor{b: data, pos: int(at) + len(hdf5Signature)}
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
		return nil, fmt.Errorf("HDF5 superblock version %d is not supported", version)
	}
	if c.err != nil {
		return nil, fmt.Errorf("HDF5 superblock: %v", c.err)
	}
	if f.base != at && f.base != 0 {
		return nil, fmt.Errorf("HDF5 base address %#x: want %#x", f.base, at)
	}
	f.base = at
	var members []h5Member
	var err error
	if rootCached {
		members, err = f.symbolTable(rootBtree, rootHeap)
	} else {
		var root *h5Object
		if root, err = f.object(rootAddr); err == nil {
			members, err = f.groupMembers(root)
		}
	}
	if err != nil {
		return nil, err
	}
	file := &File{Order: binary.LittleEndian, Text: "", data: data, h5: f}
	for _, m := range members {
		if strings.HasPrefix(m.name, "#") { // #refs#, #subsystem#: MATLAB's own
			continue
		}
		o, err := f.object(m.addr)
		if err != nil {
			return nil, fmt.Errorf("variable %s: %v", m.name, err)
		}
		v, err := o.variable(m.name)
		if err != nil {
			return nil, fmt.Errorf("variable %s: %v", m.name, err)
		}
		file.Vars = append(file.Vars, v)
	}
	return file, nil
}

// h5Block is a block of object header messages.
type h5Block struct{ addr, size uint64 }

// h5Member is a named member of a group.
type h5Member struct {
	name string
	addr uint64
}

// groupMembers lists the members of a group from its object header.
func (f *h5File) groupMembers(o *h5Object) ([]h5Member, error) {
	switch {
	case o.symbolTable:
		return f.symbolTable(o.btree, o.heap)
	case o.denseLinks:
		return nil, errors.New("the root group keeps its members in dense link storage (fractal heap), which is not supported")
	}
	var ms []h5Member
	for name, a := range o.links {
		ms = append(ms, h5Member{name, a})
	}
	// Map order is random; sort by name so that listings are stable.
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && ms[j].name < ms[j-1].name; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
	return ms, nil
}

// maxMembers bounds the members of a group read.
const maxMembers = 1 << 16

// symbolTable lists a group stored the old way: a version-1 B-tree of group
// nodes whose leaves point to symbol table nodes, names in a local heap.
func (f *h5File) symbolTable(btree, heap uint64) ([]h5Member, error) {
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
	var members []h5Member
	var walk func(addr uint64, depth int) error
	walk = func(addr uint64, depth int) error {
		if depth > 32 {
			return errors.New("group B-tree is too deep")
		}
		if err := f.visit(addr, "group B-tree node"); err != nil {
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
			if err := f.visit(child, "symbol table node"); err != nil {
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
				members = append(members, h5Member{string(name), obj})
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

// object reads the object header at addr and the messages the reader uses.
func (f *h5File) object(addr uint64) (*h5Object, error) {
	if err := f.visit(addr, "object header"); err != nil {
		return nil, err
	}
	c, err := f.cursorAt(addr)
	if err != nil {
		return nil, err
	}
	o := &h5Object{}
	var blocks []h5Block
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
		if err := o.messagesV2(f, c.b[c.pos:c.pos+int(size)], flags, &blocks); err != nil {
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
			if err := o.messagesV2(f, b[4:blocks[i].size-4], flags, &blocks); err != nil {
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
	blocks = append(blocks, h5Block{addr + 16, size})
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
				if err := f.visit(a, "object header block"); err != nil {
					return nil, err
				}
				blocks = append(blocks, h5Block{a, s})
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
func (o *h5Object) messagesV2(f *h5File, b []byte, flags uint8, blocks *[]h5Block) error {
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
			if err := f.visit(a, "object header block"); err != nil {
				return err
			}
			*blocks = append(*blocks, h5Block{a, s})
			continue
		}
		if err := o.message(f, typ, body); err != nil {
			return err
		}
	}
	return nil
}

// message records what the reader needs of one header message.
func (o *h5Object) message(f *h5File, typ uint16, body []byte) error {
	c := &cursor{b: body}
	d := o.dataset
	if d == nil && (typ == 0x1 || typ == 0x3 || typ == 0x8 || typ == 0xB) {
		d = &h5Dataset{}
		o.dataset = d
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
		d.dims = make([]uint64, rank)
		for i := range d.dims {
			d.dims[i] = c.u64()
		}
	case 0x3: // datatype
		o.hasDTy = true
		cv := c.u8()
		bits := c.take(3)
		d.elemSize = int(c.u32())
		o.dtypeClass = int(cv & 0x0f)
		if c.err != nil {
			break
		}
		switch o.dtypeClass {
		case 0: // fixed-point
			d.kind = 'u'
			if bits[0]&0x08 != 0 {
				d.kind = 'i'
			}
			d.bigEndian = bits[0]&0x01 != 0
		case 1: // floating-point
			if bits[0]&0x40 != 0 {
				return errors.New("VAX floating-point data is not supported")
			}
			d.kind = 'f'
			d.bigEndian = bits[0]&0x01 != 0
		}
	case 0x8: // data layout
		o.hasLayout = true
		version := c.u8()
		if version != 3 && version != 4 {
			d.unsupported = fmt.Sprintf("data layout message version %d is not supported", version)
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
				d.unsupported = "chunked data with an HDF5 1.10 chunk index (data layout version 4) is not supported"
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
			d.unsupported = fmt.Sprintf("data layout class %d is not supported", d.layout)
			return nil
		}
	case 0xB: // filter pipeline
		version := c.u8()
		n := int(c.u8())
		if version == 1 {
			c.skip(6)
		}
		for range n {
			var fl h5Filter
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
		size := int(binary.LittleEndian.Uint32(dt[4:8]))
		switch name {
		case "MATLAB_class":
			if dt[0]&0x0f == 3 { // fixed-length string
				o.matlabClass = strings.TrimRight(string(c.take(min(size, len(c.b)-c.pos))), "\x00 ")
			}
		case "MATLAB_empty":
			o.empty = true
		}
		return nil // a malformed attribute other than these does not matter
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

// matlabClasses maps MATLAB_class attribute values to classes.
var matlabClasses = map[string]Class{
	"double": ClassDouble, "single": ClassSingle, "int8": ClassInt8, "uint8": ClassUint8,
	"int16": ClassInt16, "uint16": ClassUint16, "int32": ClassInt32, "uint32": ClassUint32,
	"int64": ClassInt64, "uint64": ClassUint64, "char": ClassChar, "cell": ClassCell,
	"struct": ClassStruct, "logical": ClassUint8,
}

// variable describes an object as a MAT-file variable.
func (o *h5Object) variable(name string) (*Var, error) {
	v := &Var{Name: name}
	d := o.dataset
	if d == nil || !o.hasLayout {
		// A group: a struct (or an object MATLAB stores as one).
		v.Class, v.Dims = ClassStruct, []int{1, 1}
		if c, ok := matlabClasses[o.matlabClass]; ok {
			v.Class = c
		}
		return v, nil
	}
	if !o.hasDTy || !o.hasSpace {
		return nil, errors.New("dataset without a datatype or dataspace")
	}
	// The dims reversed are MATLAB's.
	v.Dims = make([]int, max(len(d.dims), 2))
	for i := range v.Dims {
		v.Dims[i] = 1
	}
	for i, x := range d.dims {
		if x > math.MaxInt32 {
			return nil, fmt.Errorf("dimension %d is too large", x)
		}
		v.Dims[len(d.dims)-1-i] = int(x)
	}
	if len(d.dims) == 1 {
		v.Dims[0], v.Dims[1] = v.Dims[1], v.Dims[0] // a vector: 1×n
	}
	if o.empty {
		v.Dims = []int{0, 0}
	}
	cls, ok := matlabClasses[o.matlabClass]
	switch {
	case ok:
		v.Class = cls
		v.Logical = o.matlabClass == "logical"
	case o.matlabClass != "":
		v.Class = ClassObject
	case o.dtypeClass == h5Enum: // h5py's bool, an enumeration {FALSE, TRUE}
		v.Class, v.Logical = ClassUint8, true
	case o.dtypeClass == h5Compound: // h5py's complex numbers, {r, i}
		v.Class = classOfElement('f', d.elemSize/2)
		if !v.Class.Numeric() {
			v.Class = ClassStruct
		}
	default: // no attribute (written by h5py): by the element type
		v.Class = classOfElement(d.kind, d.elemSize)
	}
	if o.dtypeClass == h5Compound && v.Class.Numeric() { // {real, imag}
		v.Complex = true
	}
	v.Half = d.kind == 'f' && d.elemSize == 2
	if v.Class.Numeric() && !v.Complex && !v.Logical && classOfElement(d.kind, d.elemSize) == 0 {
		return nil, fmt.Errorf("class %s stored as HDF5 datatype class %d of %d bytes: not a plain number", v.Class, o.dtypeClass, d.elemSize)
	}
	v.h5 = d
	return v, nil
}

// The HDF5 datatype classes that stand for MATLAB arrays other than plain
// numbers.
const (
	h5Compound = 6
	h5Enum     = 8
)

// classOfElement returns the class whose values are elements of the given
// kind and size, or 0. Half-precision floats, which have no class, are
// single.
func classOfElement(kind byte, size int) Class {
	switch {
	case kind == 'f' && size == 2:
		return ClassSingle
	case kind == 'f' && size == 8:
		return ClassDouble
	case kind == 'f' && size == 4:
		return ClassSingle
	case kind == 'u' && size == 1:
		return ClassUint8
	case kind == 'i' && size == 1:
		return ClassInt8
	case kind == 'u' && size == 2:
		return ClassUint16
	case kind == 'i' && size == 2:
		return ClassInt16
	case kind == 'u' && size == 4:
		return ClassUint32
	case kind == 'i' && size == 4:
		return ClassInt32
	case kind == 'u' && size == 8:
		return ClassUint64
	case kind == 'i' && size == 8:
		return ClassInt64
	}
	return 0
}

// maxExpansion bounds how much larger than the file a dataset may be:
// deflate cannot compress by more than about 1032:1, so a dataset larger
// than that is not backed by the file.
const maxExpansion = 1100

// load reads the values of a dataset: little-endian, in HDF5's C order
// (MATLAB's column-major order).
func (f *h5File) load(v *Var) (*Var, error) {
	d := v.h5
	if miType(d.kind, d.elemSize) == 0 {
		return nil, fmt.Errorf("variable %s: HDF5 elements of %d bytes that are not plain numbers", v.Name, d.elemSize)
	}
	if d.unsupported != "" {
		return nil, fmt.Errorf("variable %s: %s; re-saving the file as v7 avoids the problem", v.Name, d.unsupported)
	}
	count := uint64(1)
	for _, x := range d.dims {
		if x != 0 && count > math.MaxInt32/x {
			return nil, fmt.Errorf("variable %s: %s is too large", v.Name, v.Shape())
		}
		count *= x
	}
	total := count * uint64(d.elemSize)
	if total > uint64(len(f.data))*maxExpansion+1<<20 {
		return nil, fmt.Errorf("variable %s: %d bytes of data cannot come from a %d-byte file", v.Name, total, len(f.data))
	}
	var out []byte
	switch d.layout {
	case 0:
		if uint64(len(d.compact)) != total {
			return nil, fmt.Errorf("variable %s: %d bytes of compact data, want %d", v.Name, len(d.compact), total)
		}
		out = bytes.Clone(d.compact)
	case 1:
		if d.address == undefined {
			return nil, fmt.Errorf("variable %s: the dataset was never written", v.Name)
		}
		if d.size != total {
			return nil, fmt.Errorf("variable %s: %d bytes of contiguous data, want %d", v.Name, d.size, total)
		}
		b, err := f.at(d.address)
		if err != nil || uint64(len(b)) < total {
			return nil, fmt.Errorf("variable %s: truncated: its data runs past the end of the file", v.Name)
		}
		out = bytes.Clone(b[:total])
	case 2:
		var err error
		if out, err = f.chunked(d, total); err != nil {
			return nil, fmt.Errorf("variable %s: %v", v.Name, err)
		}
	}
	if d.bigEndian {
		swapBytes(out, d.elemSize)
	}
	w := *v
	w.Type = miType(d.kind, d.elemSize)
	w.Data = out
	return &w, nil
}

// swapBytes reverses the bytes of every size-byte element of b.
func swapBytes(b []byte, size int) {
	for i := 0; i+size <= len(b); i += size {
		for j, k := i, i+size-1; j < k; j, k = j+1, k-1 {
			b[j], b[k] = b[k], b[j]
		}
	}
}

// miType returns the level-5 data type of elements of a kind and size
// (MIHalf for half-precision floats).
func miType(kind byte, size int) DataType {
	if kind == 'f' && size == 2 {
		return MIHalf
	}
	switch classOfElement(kind, size) {
	case ClassDouble:
		return MIDouble
	case ClassSingle:
		return MISingle
	case ClassUint8:
		return MIUint8
	case ClassInt8:
		return MIInt8
	case ClassUint16:
		return MIUint16
	case ClassInt16:
		return MIInt16
	case ClassUint32:
		return MIUint32
	case ClassInt32:
		return MIInt32
	case ClassUint64:
		return MIUint64
	case ClassInt64:
		return MIInt64
	}
	return 0
}

// chunked assembles a chunked dataset of total bytes from the chunks its
// version-1 B-tree lists.
func (f *h5File) chunked(d *h5Dataset, total uint64) ([]byte, error) {
	rank := len(d.dims)
	if len(d.chunk) != rank+1 || uint64(d.elemSize) != d.chunk[rank] {
		return nil, fmt.Errorf("chunk dimensions %v do not match the dataset's %v of %d-byte elements", d.chunk, d.dims, d.elemSize)
	}
	chunkBytes := uint64(d.elemSize)
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
func (d *h5Dataset) unfilter(b []byte, mask uint32, want uint64) ([]byte, error) {
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
			size := d.elemSize
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
			return nil, fmt.Errorf("HDF5 filter %q (%d) is not supported (deflate, shuffle and fletcher32 are)", name, fl.id)
		}
	}
	if uint64(len(b)) != want {
		return nil, fmt.Errorf("%d bytes after unfiltering, want %d", len(b), want)
	}
	return b, nil
}

// place copies a chunk whose first element is at offsets into out, the
// whole dataset in C order, leaving out what falls beyond its edges.
func (d *h5Dataset) place(out, chunk []byte, offsets []uint64) error {
	rank := len(d.dims)
	for i, o := range offsets {
		if o >= d.dims[i] || o%d.chunk[i] != 0 {
			return fmt.Errorf("chunk offset %v does not fit the dataset %v", offsets, d.dims)
		}
	}
	if rank == 0 {
		copy(out, chunk)
		return nil
	}
	es := uint64(d.elemSize)
	// Copy row by row along the last dimension.
	last := rank - 1
	rowLen := min(d.chunk[last], d.dims[last]-offsets[last])
	idx := make([]uint64, rank) // position within the chunk, last index 0
	for {
		src, dst := uint64(0), uint64(0)
		for i := range rank {
			src = src*d.chunk[i] + idx[i]
			dst = dst*d.dims[i] + offsets[i] + idx[i]
		}
		copy(out[dst*es:(dst+rowLen)*es], chunk[src*es:(src+rowLen)*es])
		// Next row: the odometer over all but the last dimension.
		i := last - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < d.chunk[i] && offsets[i]+idx[i] < d.dims[i] {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return nil
		}
	}
}

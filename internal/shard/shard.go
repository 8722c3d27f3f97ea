// Package shard lets several processes, on machines that share a file
// system and with no coordinator, write one output together: each writes
// its share of the output's lines into a part file beside the output, and
// the process that finds every part there assembles them into the output.
//
// The problem is doing so without a process that waits for the others or
// a message between them: any shard may finish last, any may be
// interrupted, and a rerun of the same command should finish what was cut
// off. The protocol:
//
//   - A part is one file, ".OUT.shard-I-of-N", beside the output OUT. It is
//     written under a temporary name (package atomicfile's: a dot, the
//     part's name, ".tmp-" and a random suffix) and renamed into place
//     when complete, so a part under its own name is always whole: it holds
//     the shard's cores (whole lines of the output, as float64, in the
//     layout of an msi.Cube; each core's lines of every layer, one layer
//     after the other, when the run writes other outputs of the same size
//     with it, a mask or a residual) followed by a trailer that records the
//     run's key (the settings and input that made it) and its settings as
//     text, the number of layers, the lines of every core and the shard's
//     processing line. An interrupted or failed shard removes its
//     temporary file; one killed outright leaves it under its temporary
//     name, which no one reads, and Clean removes with the rest.
//   - After its part is in place, a shard reads the N parts (Ready). A part
//     missing means another shard is not done: this shard stops, its part
//     waiting. The last shard to put its part in place finds them all,
//     since it looks after its own rename. Every part in place but one of
//     another run (another key: other settings, another input) is an
//     error, an *OtherRunError, that says how the settings differ: the
//     shards were not given the same flags, and that shard is to be run
//     again with this one's (its part is then replaced).
//   - Two shards that finish together may both find every part: the one
//     that creates ".OUT.shards-of-N.assembling" with O_EXCL (Claim) writes
//     the output, the other stops. The claim records its host and process:
//     a claim left by a process of this host that no longer runs is taken
//     over; any other stays until removed.
//   - The assembler streams the parts, in order of their lines, into the
//     output's writer, commits it, then removes every part and the claim
//     (Clean). If it fails or is interrupted before the commit it releases
//     the claim and leaves the parts, so that rerunning any shard (which
//     finds its own part done, with the same key, and skips its work)
//     assembles them.
//
// A file system that shows a new file to the other machines only after a
// delay can make every shard miss the last part: then no output appears
// and rerunning any shard assembles it.
//
// A run whose strips are swept twice (the second sweep reading what the
// first left of every strip, halos and all) keeps the first sweep's lines
// as the parts of a Set of a Stage, ".OUT.shard-STAGE-I-of-N", which
// every shard reads back as one cube (Parts.Lines). Such a shard cannot
// start its second sweep before every part of the stage is there: it
// writes its own, then any other that no process is writing
// (ClaimPart, a claim like the assembly's on ".OUT.shard-STAGE-I-of-N.writing"),
// then waits for the rest. The stage's parts stay until Clean.
//
// Conventions: shards count from 1, as Slurm's array ids of --array=1-N;
// lines from 0, ranges half-open.
package shard

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"tdsc/internal/atomicfile"
	"tdsc/internal/msi"
)

// Spec is the Index-th (from 1) of Count shards.
type Spec struct{ Index, Count int }

// Parse reads "I/N" with 1 ≤ I ≤ N, as Slurm's
// $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT gives it for --array=1-N.
// Its errors name the flag --shard.
func Parse(s string) (Spec, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, errI := strconv.Atoi(strings.TrimSpace(is))
	n, errN := strconv.Atoi(strings.TrimSpace(ns))
	if !ok || errI != nil || errN != nil {
		return Spec{}, fmt.Errorf("--shard %q: want I/N, two whole numbers with 1 ≤ I ≤ N (e.g. 1/4)", s)
	}
	if n < 1 {
		return Spec{}, fmt.Errorf("--shard %s: the number of shards must be at least 1", s)
	}
	if i < 1 || i > n {
		return Spec{}, fmt.Errorf("--shard %s: the shard number must be from 1 to %d (shards count from 1, like Slurm array ids of --array=1-%d)", s, n, n)
	}
	return Spec{Index: i, Count: n}, nil
}

// String returns "I/N".
func (s Spec) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Share returns the shard's part [lo, hi) of n items cut into Count
// contiguous runs whose lengths differ by at most one.
func (s Spec) Share(n int) (lo, hi int) {
	return (s.Index - 1) * n / s.Count, s.Index * n / s.Count
}

// Set is the parts of one output written by Count shards of one run.
type Set struct {
	// Out is the output's path; the parts are hidden files beside it.
	Out string
	// Count is the number of shards.
	Count int
	// Key identifies the run (its settings and input): a part with
	// another key is another run's and is not assembled.
	Key string
	// Settings says what Key identifies, one "name=value" a line, for
	// the message that compares a part of another run with this one
	// (OtherRunError); it is recorded in every part.
	Settings string
	// Layers is the number of outputs of the same size written together,
	// whose lines every part holds: the output, then, for example, a mask
	// and a residual (0 is 1, the output alone).
	Layers int
	// Stage, if not "", names parts that the shards write before the
	// output's and read back (Lines): what a sweep of every strip leaves
	// for a later one. Its parts are ".OUT.shard-STAGE-I-of-N", claimed
	// for writing by ClaimPart, and Clean removes them with the rest.
	Stage string
}

// layers returns the number of layers of the set's parts.
func (s Set) layers() int { return max(1, s.Layers) }

// PartPath returns the path of the part of shard index.
func (s Set) PartPath(index int) string {
	if s.Stage != "" {
		return s.hidden(fmt.Sprintf("shard-%s-%d-of-%d", s.Stage, index, s.Count))
	}
	return s.hidden(fmt.Sprintf("shard-%d-of-%d", index, s.Count))
}

// PartClaimPath returns the path of the claim on writing the part of
// shard index (ClaimPart).
func (s Set) PartClaimPath(index int) string { return s.PartPath(index) + ".writing" }

// claimPath is the file whose creation claims the assembly.
func (s Set) claimPath() string { return s.hidden(fmt.Sprintf("shards-of-%d.assembling", s.Count)) }

// hidden returns the path of a hidden file beside Out named after it.
func (s Set) hidden(suffix string) string {
	return filepath.Join(filepath.Dir(s.Out), "."+filepath.Base(s.Out)+"."+suffix)
}

// trailer is what a part records after its cores.
type trailer struct {
	Key          string
	Settings     string
	Width, Bands int
	// Layers is the number of layers of every core (0, in a part written
	// before there were layers, is 1).
	Layers int
	// Cores are the line ranges [start, end) of the cores, in the order
	// their values are stored.
	Cores [][2]int
	// Processing is the shard's processing line (the settings of its
	// last strip).
	Processing string
}

// trailerMagic ends every part, after the trailer's length.
const trailerMagic = "tdscpart"

// Part is a shard's part being written.
type Part struct {
	f       *atomicfile.File
	trailer trailer
	buf     []byte
}

// Create starts the part of shard index for outputs width samples ×
// bands bands wide. Nothing exists under the part's name until Commit.
func (s Set) Create(index, width, bands int) (*Part, error) {
	f, err := atomicfile.Create(s.PartPath(index), true)
	if err != nil {
		return nil, err
	}
	return &Part{f: f, trailer: trailer{Key: s.Key, Settings: s.Settings, Width: width, Bands: bands, Layers: s.layers()}}, nil
}

// WriteLines appends lines y0 .. y0+h−1 of every layer to the part: the
// cubes layers, one a layer in the set's order, all h lines high, with
// the part's width and bands.
func (p *Part) WriteLines(y0 int, layers ...*msi.Cube) error {
	t := &p.trailer
	if len(layers) != t.Layers {
		return fmt.Errorf("%s: %d layers written to a part of %d", p.f.Path(), len(layers), t.Layers)
	}
	for _, c := range layers {
		if c.Width != t.Width || c.Bands != t.Bands || c.Height != layers[0].Height {
			return fmt.Errorf("%s: lines of %d×%d×%d written to a part of %d samples × %d bands (%d lines)",
				p.f.Path(), c.Height, c.Width, c.Bands, t.Width, t.Bands, layers[0].Height)
		}
	}
	for _, c := range layers {
		p.buf = p.buf[:0]
		for _, v := range c.Data {
			p.buf = binary.LittleEndian.AppendUint64(p.buf, math.Float64bits(v))
		}
		if _, err := p.f.Write(p.buf); err != nil {
			return fmt.Errorf("%s: %v", p.f.Path(), err)
		}
	}
	t.Cores = append(t.Cores, [2]int{y0, y0 + layers[0].Height})
	return nil
}

// Commit writes the trailer with the shard's processing line and puts the
// part in place.
func (p *Part) Commit(processing string) error {
	p.trailer.Processing = processing
	js, err := json.Marshal(p.trailer)
	if err != nil {
		return err
	}
	js = binary.LittleEndian.AppendUint64(js, uint64(len(js)))
	if _, err := p.f.Write(append(js, trailerMagic...)); err != nil {
		return fmt.Errorf("%s: %v", p.f.Path(), err)
	}
	return atomicfile.Commit(p.f)
}

// Abort removes the part being written.
func (p *Part) Abort() { p.f.Abort() }

// Parts are the Count parts of a Set, every one in place and of its run.
type Parts struct {
	paths    []string
	trailers []trailer
}

// Ready returns the parts when every shard's is in place with the set's
// key, and ok false when some is not in place. A part that cannot be read
// as one is an error naming it; every part in place but some of another
// run is an *OtherRunError for the first such.
func (s Set) Ready() (parts *Parts, ok bool, err error) {
	parts = &Parts{}
	var other *OtherRunError
	for i := 1; i <= s.Count; i++ {
		path := s.PartPath(i)
		t, err := readTrailer(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		if !s.holds(t) {
			if other == nil {
				other = &OtherRunError{Index: i, Count: s.Count, Path: path, Differs: differs(t.Settings, s.Settings)}
			}
			continue
		}
		parts.paths = append(parts.paths, path)
		parts.trailers = append(parts.trailers, t)
	}
	if other != nil {
		return nil, false, other
	}
	return parts, true, nil
}

// holds reports whether a part with trailer t is of the set's run.
func (s Set) holds(t trailer) bool {
	return t.Key == s.Key && max(1, t.Layers) == s.layers()
}

// OtherRunError is Ready's error when every part is in place but the part
// of shard Index is of another run: its shard was given other flags (or
// another input), and a shard run again with this one's settings
// replaces it.
type OtherRunError struct {
	Index, Count int
	Path         string
	// Differs lists the settings of that part and of this run that
	// differ, "" when they agree (the key covers what they do not say).
	Differs string
}

func (e *OtherRunError) Error() string {
	why := "other settings or another input"
	if e.Differs != "" {
		why = e.Differs
	}
	return fmt.Sprintf("%s: the part of shard %d/%d is of another run (%s): give every shard the same flags, and run shard %d/%d again with these (its part is then replaced)",
		e.Path, e.Index, e.Count, why, e.Index, e.Count)
}

// maxDiffers bounds the settings an OtherRunError lists from either side.
const maxDiffers = 4

// differs says which lines of the settings there (a part's) and here
// (this run's) the other lacks, as "--a=1 there, --a=2 here" or "--b=3
// there and not here"; "" when the two have the same lines.
func differs(there, here string) string {
	only := func(a, b string) string {
		var out []string
		others := strings.Split(b, "\n")
		for _, l := range strings.Split(a, "\n") {
			if l != "" && !slices.Contains(others, l) {
				out = append(out, l)
			}
		}
		if len(out) > maxDiffers {
			out = append(out[:maxDiffers], "…")
		}
		return strings.Join(out, " ")
	}
	a, b := only(there, here), only(here, there)
	switch {
	case a == "" && b == "":
		return ""
	case a == "":
		return b + " here and not there"
	case b == "":
		return a + " there and not here"
	}
	return a + " there, " + b + " here"
}

// Done reports whether the part of shard index is in place with the set's
// key (a shard run again after its part was written need not write it
// again).
func (s Set) Done(index int) bool {
	t, err := readTrailer(s.PartPath(index))
	return err == nil && s.holds(t)
}

// readTrailer reads the trailer of the part at path and checks that the
// part holds the values it lists.
func readTrailer(path string) (trailer, error) {
	var t trailer
	f, err := os.Open(path)
	if err != nil {
		return t, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return t, err
	}
	end := make([]byte, 8+len(trailerMagic))
	size := fi.Size()
	if size < int64(len(end)) {
		return t, fmt.Errorf("%s: not a part of a sharded output (too short)", path)
	}
	if _, err := f.ReadAt(end, size-int64(len(end))); err != nil {
		return t, fmt.Errorf("%s: %v", path, err)
	}
	n := binary.LittleEndian.Uint64(end)
	if string(end[8:]) != trailerMagic || n > uint64(size)-uint64(len(end)) {
		return t, fmt.Errorf("%s: not a part of a sharded output", path)
	}
	js := make([]byte, n)
	if _, err := f.ReadAt(js, size-int64(len(end))-int64(n)); err != nil {
		return t, fmt.Errorf("%s: %v", path, err)
	}
	if err := json.Unmarshal(js, &t); err != nil {
		return t, fmt.Errorf("%s: a part whose trailer cannot be read: %v", path, err)
	}
	var values int64
	for _, c := range t.Cores {
		values += int64(c[1]-c[0]) * int64(t.Width) * int64(t.Bands) * int64(max(1, t.Layers))
	}
	if values*8 != size-int64(len(end))-int64(n) {
		return t, fmt.Errorf("%s: a part whose size does not match its trailer", path)
	}
	return t, nil
}

// Processing returns the processing line of the shard that holds the
// output's last line (the settings of the last strip).
func (p *Parts) Processing() string {
	best, last := "", -1
	for _, t := range p.trailers {
		for _, c := range t.Cores {
			if c[1] > last {
				best, last = t.Processing, c[1]
			}
		}
	}
	return best
}

// Each calls fn with every core of the parts, in the order of the parts
// and of the cores in each: the lines from y0 of every layer, in the
// set's order of the layers, one core in memory at a time; it stops at
// fn's first error.
func (p *Parts) Each(fn func(y0 int, layers []*msi.Cube) error) error {
	for i, path := range p.paths {
		if err := eachCore(path, p.trailers[i], fn); err != nil {
			return err
		}
	}
	return nil
}

// eachCore is Each for the part at path with trailer t.
func eachCore(path string, t trailer, fn func(y0 int, layers []*msi.Cube) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var raw []byte
	layers := make([]*msi.Cube, max(1, t.Layers))
	for _, core := range t.Cores {
		for l := range layers {
			c := msi.NewCube(core[1]-core[0], t.Width, t.Bands)
			if need := 8 * len(c.Data); cap(raw) < need {
				raw = make([]byte, need)
			}
			raw = raw[:8*len(c.Data)]
			if _, err := io.ReadFull(f, raw); err != nil {
				return fmt.Errorf("%s: %v", path, err)
			}
			for i := range c.Data {
				c.Data[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
			}
			layers[l] = c
		}
		if err := fn(core[0], layers); err != nil {
			return err
		}
	}
	return nil
}

// Claim claims the assembly of the set's output for this process: ok is
// true when this process created the claim (release removes it) and false
// when another holds it. A claim left by a process of this host that has
// ended is taken over.
func (s Set) Claim() (release func(), ok bool, err error) {
	return claim(s.claimPath())
}

// ClaimPart claims the writing of the part of shard index for this
// process, as Claim claims the assembly: a shard that has written its own
// part may write another's that no process is writing, so that shards
// that do not all run at once (more shards than slots, one after the
// other) still leave every part, each part written once.
func (s Set) ClaimPart(index int) (release func(), ok bool, err error) {
	return claim(s.PartClaimPath(index))
}

// claim creates the claim at path for this process (Claim).
func claim(path string) (release func(), ok bool, err error) {
	host, _ := os.Hostname()
	me := fmt.Sprintf("%s %d", host, os.Getpid())
	for range 2 {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_, werr := f.WriteString(me + "\n")
			if cerr := f.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				os.Remove(path)
				return nil, false, fmt.Errorf("%s: %v", path, werr)
			}
			return func() { os.Remove(path) }, true, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, false, err
		}
		if !abandoned(path, host) {
			return nil, false, nil
		}
		os.Remove(path)
	}
	return nil, false, nil
}

// abandoned reports whether the claim at path was made by a process of
// host that no longer runs.
func abandoned(path, host string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	h, pid, ok := strings.Cut(strings.TrimSpace(string(b)), " ")
	n, err := strconv.Atoi(pid)
	if !ok || err != nil || h != host || n <= 0 {
		return false
	}
	return !running(n)
}

// Claimant returns who holds the claim at path ("host pid"), "" when
// none does or it cannot be read, for messages.
func Claimant(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// ClaimPath returns the path of the claim, for messages.
func (s Set) ClaimPath() string { return s.claimPath() }

// Clean removes every part of the output, of any run and any count of
// shards, and their temporary files and claims: what remains of sharded
// runs once the output is in place.
func (s Set) Clean() {
	prefix := "." + filepath.Base(s.Out) + ".shard"
	entries, err := os.ReadDir(filepath.Dir(s.Out))
	if err != nil {
		return
	}
	for _, e := range entries {
		// A part's temporary file is its name behind one more dot.
		if strings.HasPrefix(e.Name(), prefix) || strings.HasPrefix(e.Name(), "."+prefix) {
			os.Remove(filepath.Join(filepath.Dir(s.Out), e.Name()))
		}
	}
}

// Lines reads the lines of the first layer of the parts, in any order,
// as a tile.Reader: the cube the cores of every part make up together,
// which must cover its lines from 0 each once. Close closes its files.
type Lines struct {
	files                []*os.File
	cores                []coreAt
	height, width, bands int
	raw                  []byte
}

// coreAt is a core of a part: its lines [start, end), its part's index
// in Lines.files, and the offset of its values in the part.
type coreAt struct {
	start, end int
	file       int
	offset     int64
}

// Lines opens the parts for reading their lines (the first layer's). It
// is an error if the parts' cores do not cover lines 0 to their last
// line, each once.
func (p *Parts) Lines() (*Lines, error) {
	l := &Lines{}
	for i, path := range p.paths {
		t := p.trailers[i]
		l.width, l.bands = t.Width, t.Bands
		f, err := os.Open(path)
		if err != nil {
			l.Close()
			return nil, err
		}
		l.files = append(l.files, f)
		var offset int64
		for _, c := range t.Cores {
			l.cores = append(l.cores, coreAt{start: c[0], end: c[1], file: i, offset: offset})
			offset += 8 * int64(c[1]-c[0]) * int64(t.Width) * int64(t.Bands) * int64(max(1, t.Layers))
		}
	}
	slices.SortFunc(l.cores, func(a, b coreAt) int { return a.start - b.start })
	for _, c := range l.cores {
		if c.start != l.height || c.end <= c.start {
			l.Close()
			return nil, fmt.Errorf("%s: the parts' cores do not cover the lines from 0 each once (lines %d–%d after %d)", p.paths[c.file], c.start, c.end-1, l.height)
		}
		l.height = c.end
	}
	return l, nil
}

// Size returns the height, width and bands of the parts' cube.
func (l *Lines) Size() (height, width, bands int) { return l.height, l.width, l.bands }

// ReadLines returns lines y0 .. y0+n−1 of the parts' cube. It is not safe
// for concurrent use.
func (l *Lines) ReadLines(y0, n int) (*msi.Cube, error) {
	if y0 < 0 || n < 1 || y0+n > l.height {
		return nil, fmt.Errorf("shard: lines %d–%d of parts of %d lines", y0, y0+n-1, l.height)
	}
	out := msi.NewCube(n, l.width, l.bands)
	i, _ := slices.BinarySearchFunc(l.cores, y0, func(c coreAt, y int) int {
		switch {
		case c.end <= y:
			return -1
		case c.start > y:
			return 1
		}
		return 0
	})
	for y := y0; y < y0+n; i++ {
		c := l.cores[i]
		lines := min(c.end, y0+n) - y
		per := lines * l.width
		if need := 8 * per; cap(l.raw) < need {
			l.raw = make([]byte, need)
		}
		raw := l.raw[:8*per]
		for b := range l.bands {
			// A core holds band after band, each of its lines in order.
			at := c.offset + 8*(int64(b)*int64(c.end-c.start)+int64(y-c.start))*int64(l.width)
			if _, err := l.files[c.file].ReadAt(raw, at); err != nil {
				return nil, fmt.Errorf("%s: %v", l.files[c.file].Name(), err)
			}
			dst := out.Band(b)[(y-y0)*l.width:]
			for k := range per {
				dst[k] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*k:]))
			}
		}
		y += lines
	}
	return out, nil
}

// Close closes the parts' files.
func (l *Lines) Close() error {
	var first error
	for _, f := range l.files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

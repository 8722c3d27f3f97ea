package pngstack

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"tdsc/internal/atomicfile"
	"tdsc/internal/msi"
	"tdsc/internal/parallel"
)

// writeStack writes c as a band stack: the folder dir holding one 16-bit
// grayscale PNG per band, named <scene>_NN.png with NN = 01, 02, ... (more
// digits when there are over 99 bands) and scene or, when that is empty,
// the base name of dir. Values are clipped to [0, 255], scaled by
// 65535/255 and rounded; it returns the number of clipped voxels. A
// missing (NaN) voxel is written as 0: a PNG has no mark for it. An
// infinite value is an error. No metadata is stored.
//
// The bands are written in parallel into a temporary folder beside dir
// (.<name>.tmp-*) that is renamed to dir at the end and removed on any
// error (package atomicfile). An existing dir is an *atomicfile.ExistsError
// unless opts.Force is set; then it is renamed away, the new folder renamed
// in and the old one removed. Force refuses to replace anything but a
// folder holding only PNG files. Once opts.Context is cancelled no further
// band is started and the write fails with its error.
func writeStack(dir string, c *msi.Cube, scene string, opts msi.WriteOptions) (int, error) {
	if err := c.Check(); err != nil {
		return 0, fmt.Errorf("%s: %v", dir, err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", dir, err)
	}
	if scene == "" {
		scene = filepath.Base(abs)
	}
	if scene == "" || strings.HasPrefix(scene, ".") || strings.ContainsAny(scene, `/\`+"\x00") {
		return 0, fmt.Errorf("%s: %q cannot be a scene name (the prefix of the band files): choose another with a name not starting with '.'", dir, scene)
	}
	if opts.Force {
		if err := replaceable(dir); err != nil {
			return 0, err
		}
	}
	out, err := atomicfile.CreateDir(dir, opts.Force)
	if err != nil {
		return 0, err
	}
	clipped, err := writeBands(dir, out.Temp(), scene, c, opts)
	if err != nil {
		out.Abort()
		return 0, err
	}
	if err := out.Commit(); err != nil {
		return 0, err
	}
	return clipped, nil
}

// replaceable reports why an existing output at dir must not be replaced
// by a band stack, if it must not: only a folder holding nothing but PNG
// files may be.
func replaceable(dir string) error {
	fi, ok, err := exists(dir)
	if err != nil || !ok {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s exists and is not a folder: not replacing it with a band stack", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.EqualFold(filepath.Ext(e.Name()), ".png") {
			return fmt.Errorf("%s holds %s, which is not a PNG file: not replacing the folder", dir, e.Name())
		}
	}
	return nil
}

// writeBands encodes every band of c into the folder tmp, up to GOMAXPROCS
// at a time, and returns the number of clipped voxels. dir names the output
// in errors. A cancelled opts.Context stops it with the context's error.
func writeBands(dir, tmp, scene string, c *msi.Cube, opts msi.WriteOptions) (int, error) {
	digits := max(2, len(strconv.Itoa(c.Bands)))
	workers := min(parallel.Workers(0), c.Bands)
	images := make([]*image.Gray16, workers)
	// As in decodeBands, the lowest-numbered failing band is reported.
	errs := make([]error, c.Bands)
	var clipped atomic.Int64
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	stopped := parallel.For(ctx, c.Bands, workers, func(w, b int) error {
		if images[w] == nil {
			images[w] = image.NewGray16(image.Rect(0, 0, c.Width, c.Height))
		}
		n, err := quantise(images[w], c, b)
		if err == nil {
			name := fmt.Sprintf("%s_%0*d.png", scene, digits, b+1)
			err = encodePNG(filepath.Join(tmp, name), images[w])
		}
		if err != nil {
			errs[b] = fmt.Errorf("%s: %v", dir, err)
			return errs[b]
		}
		clipped.Add(int64(n))
		return nil
	})
	for _, err := range errs {
		if err != nil {
			return 0, err
		}
	}
	if stopped != nil { // cancelled: bands are missing
		return 0, stopped
	}
	return int(clipped.Load()), nil
}

// quantise stores band b of c in img as 16-bit values: clipped to
// [0, 255], times 65535/255, rounded, missing (NaN) values 0. It returns
// how many values were clipped, and an error for an infinite value.
func quantise(img *image.Gray16, c *msi.Cube, b int) (int, error) {
	clipped := 0
	for i, v := range c.Band(b) {
		switch {
		case math.IsNaN(v):
			v = 0
		case math.IsInf(v, 0):
			return 0, fmt.Errorf("band %d, line %d, sample %d (from 0): value %v cannot be stored", b, i/c.Width, i%c.Width, v)
		case v < 0:
			v = 0
			clipped++
		case v > 255:
			v = 255
			clipped++
		}
		q := uint16(math.Round(v * 65535 / 255))
		img.Pix[2*i] = byte(q >> 8)
		img.Pix[2*i+1] = byte(q)
	}
	return clipped, nil
}

// encodePNG writes img to a new file at path.
func encodePNG(path string, img image.Image) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	err = png.Encode(w, img)
	if err == nil {
		err = w.Flush()
	}
	return errors.Join(err, f.Close())
}

// exists reports whether path exists (without following a final symlink).
func exists(path string) (os.FileInfo, bool, error) {
	fi, err := os.Lstat(path)
	if err == nil {
		return fi, true, nil
	}
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	return nil, false, err
}

package batch

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"tdsc/internal/atomicfile"
	"tdsc/internal/metrics/scorejson"
)

// ResultFormat is the value of Result.Format in the files this package
// writes.
const ResultFormat = "tdsc-batch-result/1"

// Result is the JSON file of one finished cell.
type Result struct {
	// Format is ResultFormat.
	Format string `json:"format"`
	// Cell is the cell's id (Cell.ID).
	Cell string `json:"cell"`
	// Scene is the scene's name and ScenePath its clean cube.
	Scene     string  `json:"scene"`
	ScenePath string  `json:"scene_path"`
	Sigma     float64 `json:"sigma"`
	Seed      uint64  `json:"seed"`
	// Label names the method's column; Method and Flags are what ran
	// (canonical flags); MethodIndex is the method's place in the plan,
	// which orders the report's columns.
	Label       string   `json:"label"`
	Method      string   `json:"method"`
	Flags       []string `json:"flags"`
	MethodIndex int      `json:"method_index"`
	// The scores of the denoised cube against the clean one (package
	// metrics; SAM in degrees). A PSNR of an exact cube is +Inf, null in
	// the file.
	PSNR  scorejson.Float `json:"psnr"`
	SSIM  scorejson.Float `json:"ssim"`
	SAM   scorejson.Float `json:"sam"`
	ERGAS scorejson.Float `json:"ergas"`
	// WallSeconds is the denoising run's wall time (scoring excluded).
	WallSeconds float64 `json:"wall_seconds"`
	// PeakRSSBytes is the denoising process's peak resident memory, 0 when
	// the system does not say.
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// Threads is the --threads the denoiser ran with (0: all cores).
	Threads int `json:"threads"`
	// Output is the denoised cube's file name beside the result, empty when
	// it was not kept.
	Output string `json:"output,omitempty"`
	// Command is the denoise command line that ran (program name first).
	Command []string `json:"command"`
	// Version is tdsc's version string; Host the machine's name; Finished
	// the end time (RFC 3339).
	Version  string `json:"tdsc_version"`
	Host     string `json:"host,omitempty"`
	Finished string `json:"finished"`
	// Fingerprint is the cell's Fingerprint when it ran.
	Fingerprint string `json:"fingerprint"`
}

// ReadResult reads the result file at path. A file that is not a result of
// this format is an error that says so.
func ReadResult(path string) (*Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file", path)
		}
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: not a tdsc batch result: %v", path, err)
	}
	if r.Format != ResultFormat {
		return nil, fmt.Errorf("%s: not a tdsc batch result (format %q, want %q)", path, r.Format, ResultFormat)
	}
	if r.Scene == "" || r.Label == "" || !(r.Sigma > 0) {
		return nil, fmt.Errorf("%s: a tdsc batch result without its scene, σ or label", path)
	}
	return &r, nil
}

// writeResult writes r to path atomically, replacing an older file.
func writeResult(path string, r *Result) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	f, err := atomicfile.Create(path, true)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Abort()
		return fmt.Errorf("%s: %v", path, err)
	}
	return atomicfile.Commit(f)
}

package cmd

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"tdsc/internal/pipeline"
)

// tileFlags are denoise's flags for cubes larger than memory
// (pipeline.Strips).
type tileFlags struct {
	lines     int    // --tile: core lines per strip, 0 to decide by the budget
	maxMemory string // --max-memory, empty for the default budget
}

// parseBytes reads a size such as 2G, 1536M, 512MiB or 1000000: a whole
// number of bytes with an optional unit K, M, G or T (powers of 1024; KiB,
// MB and the like are read the same).
func parseBytes(s string) (int64, error) {
	num, unit := s, ""
	if i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' }); i >= 0 {
		num, unit = s[:i], s[i:]
	}
	unit = strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(unit), "B"), "I")
	shift := map[string]uint{"": 0, "K": 10, "M": 20, "G": 30, "T": 40}
	sh, ok := shift[unit]
	v, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || !(v > 0) || v*math.Exp2(float64(sh)) > math.MaxInt64/2 {
		return 0, fmt.Errorf("want a positive size such as 2G, 1536M or 1000000 (bytes), got %q", s)
	}
	return int64(v * math.Exp2(float64(sh))), nil
}

// memoryBudget is the one rule of the memory budget of every command:
// maxMemory (--max-memory) read by parseBytes, or, when it is empty,
// pipeline.DefaultBudget. A budget larger than the machine's RAM is an
// error (pipeline.CheckBudget): a cube that fits it would not fit the
// machine, and Go's allocator would end the run with a crash rather than
// an error.
func memoryBudget(maxMemory string) (int64, error) {
	if maxMemory == "" {
		return pipeline.DefaultBudget(), nil
	}
	n, err := parseBytes(maxMemory)
	if err != nil {
		return 0, fmt.Errorf("--max-memory: %v", err)
	}
	if err := pipeline.CheckBudget(n); err != nil {
		return 0, fmt.Errorf("--max-memory: %s %v", maxMemory, err)
	}
	return n, nil
}

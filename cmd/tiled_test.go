package cmd

import "testing"

func TestParseBytes(t *testing.T) {
	for s, want := range map[string]int64{
		"1000000": 1000000, "2G": 2 << 30, "1536M": 1536 << 20, "512MiB": 512 << 20, "64kb": 64 << 10,
		"1.5G": 3 << 29, "3B": 3, "1T": 1 << 40,
	} {
		if got, err := parseBytes(s); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "0", "-1G", "lots", "2X", "G", "1.2.3M", "1e3", "9999999T", "2 G"} {
		if got, err := parseBytes(s); err == nil {
			t.Errorf("parseBytes(%q) = %d, want an error", s, got)
		}
	}
}

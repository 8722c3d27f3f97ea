package pipeline

import (
	"testing"

	"tdsc/internal/report"
	"tdsc/internal/shard"
	"tdsc/internal/tile"
)

// TestShardLines checks the strips of a sharded run: the given lines when
// they make at least a strip a shard, else the fewest lines, a multiple
// of the alignment and no thinner than the halo, that do.
func TestShardLines(t *testing.T) {
	g := tile.Geometry{Halo: 12, Align: 6}
	for _, c := range []struct {
		height, lines, count, want int
	}{
		{128, 1000, 1, 1000}, // one shard: as one run
		{128, 1000, 2, 60},   // ⌈128/2⌉ = 64, down to 60: 3 strips
		{128, 30, 2, 30},     // 5 strips already
		{128, 1000, 8, 12},   // 16 → 12, the halo
		{128, 1000, 40, 12},  // more shards than strips of the halo: some have none
	} {
		j := &Job{Strips: Strips{Shard: shard.Spec{Index: 1, Count: c.count}}}
		got := j.shardLines(c.lines, c.height, g, report.Discard)
		if got != c.want {
			t.Errorf("%d lines, --tile %d, %d shards: strips of %d lines, want %d", c.height, c.lines, c.count, got, c.want)
		}
		if n := len(tile.Plan(c.height, got, g)); c.want != c.lines && c.count <= c.height/max(g.Halo, g.Align) && n < c.count {
			t.Errorf("%d shards get %d strips", c.count, n)
		}
	}
}

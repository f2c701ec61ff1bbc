package discord

import "github.com/prometheus/client_golang/prometheus"

// Collectors are Discord's own gauges, which internal/app registers beside
// weft's: weft_discord_shards_held, read through the elector at each
// scrape, and weft_discord_shards, the shards configured (0 with Discord
// off), which an alert compares the held ones across replicas to.
func (a *App) Collectors() []prometheus.Collector {
	shards := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "weft_discord_shards", Help: "Discord gateway shards configured (DISCORD_SHARD_COUNT; 0 with Discord off).",
	})
	shards.Set(float64(a.Shards()))
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "weft_discord_shards_held", Help: "Discord gateway shards this replica holds and runs.",
		}, func() float64 { return float64(a.shardsHeld()) }),
		shards,
	}
}

// shardsHeld counts the gateway shards this replica runs.
func (a *App) shardsHeld() int {
	if a.Elector() == nil {
		return 0
	}
	return len(a.Elector().Held())
}

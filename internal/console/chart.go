package console

import (
	"fmt"
	"slices"
	"time"

	"github.com/weft-dev/weft/db"
)

// chart is the ops page's LLM usage chart: tokens per day, a bar per day
// stacked by model, drawn as SVG on the server (the page runs no charting
// script). Geometry is worked out here; the template only places it.
type chart struct {
	Width, Height int
	Bars          []bar
	Days          []label
	Ticks         []label
	Legend        []legendEntry
	Empty         bool
}

type bar struct {
	X, Y, W, H int
	Fill       string
	Title      string
}

type label struct {
	X, Y int
	Text string
}

type legendEntry struct {
	X, Y  int
	Fill  string
	Model string
}

// palette colours the models, in order of first appearance.
var palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948", "#9c755f"}

const (
	chartWidth  = 720
	chartHeight = 240
	chartLeft   = 60 // room for the token ticks
	chartBottom = 30 // room for the days
	chartTop    = 10
	legendRow   = 18
)

// usageChart draws days days of usage from since on.
func usageChart(usage []db.LLMUsage, since time.Time, days int) chart {
	var models []string
	perDay := map[string]map[string]int64{} // day → model → tokens
	var top int64
	for _, u := range usage {
		if !slices.Contains(models, u.Model) {
			models = append(models, u.Model)
		}
		d := u.Day.UTC().Format("2006-01-02")
		if perDay[d] == nil {
			perDay[d] = map[string]int64{}
		}
		perDay[d][u.Model] += u.InputTokens + u.OutputTokens
	}
	for _, m := range perDay {
		var sum int64
		for _, v := range m {
			sum += v
		}
		top = max(top, sum)
	}
	c := chart{Width: chartWidth, Height: chartHeight + legendRow*len(models), Empty: top == 0}
	plotH := chartHeight - chartBottom - chartTop
	slot := (chartWidth - chartLeft) / days
	for i := range days {
		day := since.AddDate(0, 0, i).Format("2006-01-02")
		x := chartLeft + i*slot
		c.Days = append(c.Days, label{X: x + slot/2, Y: chartHeight - 10, Text: day[5:]})
		y := chartTop + plotH
		for mi, m := range models {
			v := perDay[day][m]
			if v == 0 || top == 0 {
				continue
			}
			h := max(int(int64(plotH)*v/top), 1)
			y -= h
			c.Bars = append(c.Bars, bar{X: x + 4, Y: y, W: slot - 8, H: h, Fill: palette[mi%len(palette)],
				Title: fmt.Sprintf("%s %s: %d tokens", day, m, v)})
		}
	}
	for i := 0; i <= 4 && top > 0; i++ {
		v := top * int64(i) / 4
		c.Ticks = append(c.Ticks, label{X: chartLeft - 6, Y: chartTop + plotH - plotH*i/4 + 4, Text: fmt.Sprint(v)})
	}
	for i, m := range models {
		c.Legend = append(c.Legend, legendEntry{X: chartLeft, Y: chartHeight + legendRow*i, Fill: palette[i%len(palette)], Model: m})
	}
	return c
}

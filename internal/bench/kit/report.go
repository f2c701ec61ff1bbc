package kit

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Verdict is how a bench prints a figure against its target: a MISS is a
// figure, not a failure.
func Verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

// Ms formats d in milliseconds.
func Ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }

// Us formats d in microseconds.
func Us(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond)) }

// MiB formats n bytes in mebibytes.
func MiB(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }

// Table prints latency figures as the benches do: a row a figure, with its
// samples, its percentiles and its target, aligned.
type Table struct {
	tw *tabwriter.Writer
	ps []float64
}

// NewTable starts a table on w with a header row; ps are the percentiles
// each row shows, 100 printed as max.
func NewTable(w io.Writer, ps ...float64) *Table {
	t := &Table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight), ps: ps}
	cols := []string{"figure", "samples"}
	for _, p := range ps {
		if p == 100 {
			cols = append(cols, "max")
			continue
		}
		cols = append(cols, "p"+strconv.FormatFloat(p, 'f', -1, 64))
	}
	fmt.Fprintln(t.tw, strings.Join(append(cols, "target"), "\t")+"\t")
	return t
}

// Row prints one figure; target may be empty.
func (t *Table) Row(name string, l Latencies, target string) {
	cells := []string{name, strconv.Itoa(len(l))}
	for _, p := range t.ps {
		cells = append(cells, Ms(l.Percentile(p)))
	}
	fmt.Fprintln(t.tw, strings.Join(append(cells, target), "\t")+"\t")
}

// Flush writes the table out.
func (t *Table) Flush() error { return t.tw.Flush() }

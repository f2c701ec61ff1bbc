package linear

import "github.com/prometheus/client_golang/prometheus"

// Collectors are Linear's own metrics, which internal/app registers beside
// weft's, read at each scrape: the requests this replica made to Linear
// per workspace (organization; "" is LINEAR_ACCESS_TOKEN's one token) in
// the last hour and since start, the budget it estimates is left, and the
// progress thoughts of streamed answers by outcome (posted, folded while
// the budget was low, failed). None with Linear off.
func (a *App) Collectors() []prometheus.Collector {
	if a.thoughts == nil {
		return nil
	}
	return []prometheus.Collector{&collector{t: a.thoughts}}
}

var (
	requestsHourDesc = prometheus.NewDesc("weft_linear_requests_hour",
		"Requests this replica made to Linear's API in the last hour, per workspace.", []string{"organization"}, nil)
	requestsTotalDesc = prometheus.NewDesc("weft_linear_requests_total",
		"Requests this replica made to Linear's API since it started, per workspace.", []string{"organization"}, nil)
	requestsRemainingDesc = prometheus.NewDesc("weft_linear_requests_remaining",
		"The workspace's hourly request budget left, as weft estimates it (its count, or Linear's headers if lower).", []string{"organization"}, nil)
	requestsBudgetDesc = prometheus.NewDesc("weft_linear_requests_budget",
		"Each workspace's hourly request budget (WEFT_LINEAR_REQUESTS_PER_HOUR); progress thoughts fold below a fifth of it.", nil, nil)
	thoughtsDesc = prometheus.NewDesc("weft_linear_progress_thoughts_total",
		"Progress thoughts of answers being written, by outcome: posted, folded (budget low) or failed.", []string{"outcome"}, nil)
)

type collector struct{ t *Thoughts }

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{requestsHourDesc, requestsTotalDesc, requestsRemainingDesc, requestsBudgetDesc, thoughtsDesc} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	for _, u := range c.t.budget.Usages() {
		ch <- prometheus.MustNewConstMetric(requestsHourDesc, prometheus.GaugeValue, float64(u.Hour), u.Organization)
		ch <- prometheus.MustNewConstMetric(requestsTotalDesc, prometheus.CounterValue, float64(u.Total), u.Organization)
		ch <- prometheus.MustNewConstMetric(requestsRemainingDesc, prometheus.GaugeValue, float64(u.Remaining), u.Organization)
	}
	ch <- prometheus.MustNewConstMetric(requestsBudgetDesc, prometheus.GaugeValue, float64(c.t.budget.Limit()))
	posted, folded, failed := c.t.counts.snapshot()
	for outcome, n := range map[string]uint64{"posted": posted, "folded": folded, "failed": failed} {
		ch <- prometheus.MustNewConstMetric(thoughtsDesc, prometheus.CounterValue, float64(n), outcome)
	}
}

package discord

import (
	"net/url"
	"slices"
	"strings"

	"github.com/weft-dev/weft/internal/attachment"
)

// cdnHosts are where Discord serves attachments.
var cdnHosts = []string{"cdn.discordapp.com", "media.discordapp.net"}

// Files downloads the files people attach in Discord: from its CDN, which
// signs their URLs, or from the host of DISCORD_API_URL (a fake's).
func (a *App) Files() attachment.Downloader {
	hosts := cdnHosts
	if u, err := url.Parse(a.cfg.APIURL); err == nil && u.Host != "" {
		hosts = append(slices.Clone(hosts), strings.ToLower(u.Host))
	}
	return attachment.HTTP{Hosts: hosts}
}

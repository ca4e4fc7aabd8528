import ResilienceCore
import ResiliencePresentation
import ResilienceTesting
import Testing

@Suite("ErrorPresenterConformance")
struct ErrorPresenterConformanceTests {
    @Test("The default presenter conforms in every bundled language", arguments: PresentationStrings.bundledLanguages)
    func defaultPresenterConforms(language: String) async {
        let report = await ErrorPresenterConformance(
            DefaultErrorPresenter(strings: PresentationStrings.bundled(language: language))
        ).run()
        #expect(report.conforms, "\(report)")
    }

    @Test("A presenter that shows raw error text is caught")
    func rawPresenterFails() async {
        struct Raw: ErrorPresenter {
            func present(_ failure: FailureClassification, context: PresentationContext) -> UserFacingError {
                UserFacingError(
                    title: "Error", message: failure.message ?? "", severity: .error, isRecoverable: true,
                    code: failure.code)
            }
        }
        let report = await ErrorPresenterConformance(Raw()).run()
        #expect(report.result("no-raw-text-or-secrets")?.passed == false)
        #expect(report.result("partial-results-say-how-many")?.passed == false)
        #expect(report.result("title-and-message")?.passed == true)
    }
}

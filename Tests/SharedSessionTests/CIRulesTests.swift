import SharedSessionTestSupport
import Testing

/// CI cannot be talked out of its rules by what the environment inherited: any true `CI` value makes
/// every test required, and the model-based test's count cannot be lowered where every test must run.
@Suite("CI rules")
struct CIRulesTests {
    @Test("CI=true, 1, yes or on (any case) requires every test; false, 0, empty or unset does not")
    func truthyValues() {
        for value in ["true", "TRUE", "True", "1", "yes", "Yes", "on", " true "] {
            #expect(Requirements.isTrue(value), "\(value)")
        }
        for value in ["false", "0", "no", "off", "", "maybe"] {
            #expect(!Requirements.isTrue(value), "\(value)")
        }
        #expect(!Requirements.isTrue(nil))
    }

    @Test("where every test must run, an inherited SHAREDSESSION_MODEL_SEQUENCES cannot lower the model test's count")
    func modelCountCannotBeLowered() {
        let full = ModelBasedTests.defaultSequences
        #expect(ModelBasedTests.sequences(requested: nil, required: true) == full)
        #expect(ModelBasedTests.sequences(requested: "10", required: true) == full)
        #expect(ModelBasedTests.sequences(requested: "\(full * 2)", required: true) == full * 2)
        // A developer's run may ask for fewer, never for none.
        #expect(ModelBasedTests.sequences(requested: "10", required: false) == 10)
        #expect(ModelBasedTests.sequences(requested: "0", required: false) == 1)
        #expect(ModelBasedTests.sequences(requested: "junk", required: false) == full)
    }
}

// The adoption's public types (rules, events) are the engine policy's, declared beside the machine that
// uses them; a host that imports the PipeWire engine names them as its own.
@_exported public import SharedSessionEnginePolicy

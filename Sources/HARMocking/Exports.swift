// Generated scenarios `import HARMocking` and see the model types, which live in HARScenarios.
@_exported import HARScenarios

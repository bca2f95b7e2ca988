import Foundation

exit(VelvetCommand.run(Array(CommandLine.arguments.dropFirst())))

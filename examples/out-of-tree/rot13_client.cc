// A program that deploys a topology once and submits units to it (sluice/application.h),
// built against the installed package: prints every result of each unit it submits.
//   rot13_client TOPOLOGY PAYLOAD...
#include <iostream>
#include <vector>

#include <sluice/application.h>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: rot13_client TOPOLOGY PAYLOAD...\n";
    return 2;
  }
  try {
    sluice::Application app = sluice::Application::open(argv[1]);
    app.start();
    for (int i = 2; i < argc; ++i) {
      sluice::Unit unit = app.submit(argv[i]);
      while (auto b = unit.results().read()) std::cout << b->text() << "\n";
      const sluice::UnitReport report = unit.wait();
      if (!report.finished) {
        std::cerr << report.str() << "\n";
        return 1;
      }
    }
    app.stop();
  } catch (const std::exception& e) {
    std::cerr << "rot13_client: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
